# Compiled by Cython (pure Python mode): analyze_game runs once per game, and compiled its
# Python-level work costs less interpreter time. No C types are declared here.
