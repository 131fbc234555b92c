cimport cython
from libc.stdint cimport int32_t, int64_t, uint8_t, uint64_t

from chessscan.core._bits cimport lsb


cdef extern from *:
    """
    /* A batch of positions rows as an Arrow C data interface struct array (one child per
       column), over the rows' buffers: pyarrow imports it whole, in one call, where an
       array object per column costs more than the column's bytes take to encode. */
    #include <stdlib.h>
    #ifndef ARROW_C_DATA_INTERFACE
    #define ARROW_C_DATA_INTERFACE
    struct ArrowSchema;
    struct ArrowArray {
      int64_t length;
      int64_t null_count;
      int64_t offset;
      int64_t n_buffers;
      int64_t n_children;
      const void** buffers;
      struct ArrowArray** children;
      struct ArrowArray* dictionary;
      void (*release)(struct ArrowArray*);
      void* private_data;
    };
    #endif
    #define CS_BATCH_COLUMNS 32
    typedef struct {
      struct ArrowArray root;
      struct ArrowArray columns[CS_BATCH_COLUMNS];
      struct ArrowArray dictionaries[CS_BATCH_COLUMNS];
      struct ArrowArray* children[CS_BATCH_COLUMNS];
      const void* buffers[3 * 2 * CS_BATCH_COLUMNS + 1];
      PyObject* keep;  /* the objects owning the buffers */
    } cs_batch;

    static inline void cs_part_release(struct ArrowArray* a) { a->release = NULL; }

    /* The root's release (the importer's copy of it): the buffers' owners go, with the GIL
       (Arrow may release the batch from any thread); after the interpreter's end they stay. */
    static inline void cs_batch_release(struct ArrowArray* a) {
      cs_batch* b = (cs_batch*) a->private_data;
      if (Py_IsInitialized()) {
        PyGILState_STATE gil = PyGILState_Ensure();
        Py_XDECREF(b->keep);
        PyGILState_Release(gil);
      }
      free(b);
      a->release = NULL;
    }

    static inline void cs_array_init(struct ArrowArray* a, int64_t length, int64_t null_count, int64_t n_buffers,
                              const void** buffers) {
      memset(a, 0, sizeof(*a));
      a->length = length;
      a->null_count = null_count;
      a->n_buffers = n_buffers;
      a->buffers = buffers;
      a->release = cs_part_release;
    }

    /* A struct array of `length` rows and `n_columns` children (set with cs_batch_column),
       keeping `keep` alive; NULL when out of memory. */
    static inline struct ArrowArray* cs_batch_new(int64_t length, int n_columns, PyObject* keep) {
      cs_batch* b;
      int i;
      if (n_columns > CS_BATCH_COLUMNS) return NULL;
      b = (cs_batch*) malloc(sizeof(cs_batch));
      if (b == NULL) return NULL;
      b->buffers[3 * 2 * CS_BATCH_COLUMNS] = NULL;
      cs_array_init(&b->root, length, 0, 1, &b->buffers[3 * 2 * CS_BATCH_COLUMNS]);
      for (i = 0; i < n_columns; i++) b->children[i] = &b->columns[i];
      b->root.n_children = n_columns;
      b->root.children = b->children;
      b->root.release = cs_batch_release;
      b->root.private_data = b;
      Py_INCREF(keep);
      b->keep = keep;
      return &b->root;
    }

    /* Column i: `n_buffers` buffers b0..b2 (b0 the validity bitmap, NULL: no null), and with
       `dict_length` >= 0 a string dictionary of that length (its offsets and bytes). */
    static inline void cs_batch_column(struct ArrowArray* root, int i, int64_t null_count, int64_t n_buffers,
                                const void* b0, const void* b1, const void* b2,
                                int64_t dict_length, const void* dict_offsets, const void* dict_data) {
      cs_batch* b = (cs_batch*) root->private_data;
      const void** bufs = &b->buffers[6 * i];
      bufs[0] = b0; bufs[1] = b1; bufs[2] = b2;
      cs_array_init(&b->columns[i], root->length, null_count, n_buffers, bufs);
      if (dict_length >= 0) {
        bufs[3] = NULL; bufs[4] = dict_offsets; bufs[5] = dict_data;
        cs_array_init(&b->dictionaries[i], dict_length, 0, 3, &bufs[3]);
        b->columns[i].dictionary = &b->dictionaries[i];
      }
    }

    /* Column i: a fixed-width column, its values under the validity bitmap `validity`
       (NULL: no null; else the null count is left for Arrow to find). */
    static inline void cs_batch_values(struct ArrowArray* root, int i, const void* validity, const void* values) {
      cs_batch_column(root, i, validity == NULL ? 0 : -1, 2, validity, values, NULL, -1, NULL, NULL);
    }
    """
    struct ArrowArray:
        void (*release)(ArrowArray*)
    ArrowArray* cs_batch_new(int64_t length, int n_columns, object keep)
    void cs_batch_column(ArrowArray* root, int i, int64_t null_count, int64_t n_buffers, const void* b0,
                         const void* b1, const void* b2, int64_t dict_length, const void* dict_offsets,
                         const void* dict_data)
    void cs_batch_values(ArrowArray* root, int i, const void* validity, const void* values)

ctypedef ArrowArray* arrow_array_p


cdef Py_ssize_t _MIN_ROWS, _SAN_ROW_BYTES, _UCI_ROW_BYTES
cdef void* _pointer(size_t address) noexcept
cdef uint64_t _LOOSE
cdef int64_t _NOTE_NA


@cython.final
cdef class PositionRows:
    cdef public Py_ssize_t n
    cdef public list sources
    cdef public dict source_ids
    cdef public object fens
    cdef public Py_ssize_t size          # rows the buffers hold
    cdef public Py_ssize_t cap           # rows that may be written before new buffers (0: handed over)
    cdef public Py_ssize_t san_len, uci_len, checkers_len
    cdef public Py_ssize_t bitmap_bytes
    cdef public int64_t[::1] game_index
    cdef public int32_t[::1] source_id
    cdef public int32_t[::1] ply
    cdef public int32_t[::1] move_number
    cdef public int32_t[::1] color
    cdef public int32_t[::1] check_kind
    cdef public int32_t[::1] halfmove_clock
    cdef public uint64_t[::1] zobrist
    cdef public int32_t[::1] repetition
    cdef public int32_t[::1] san_offsets
    cdef public int32_t[::1] uci_offsets
    cdef public int32_t[::1] checkers_offsets
    cdef public uint8_t[::1] flag_bits
    cdef public uint8_t[::1] san_data
    cdef public uint8_t[::1] uci_data
    cdef public uint8_t[::1] checkers_data
    cdef public int64_t[::1] clock_ms
    cdef public int64_t[::1] emt_ms
    cdef public int32_t[::1] eval_cp
    cdef public int32_t[::1] eval_mate
    cdef public uint8_t[::1] note_bits
    cdef list _owners                    # the NumPy arrays under the buffers, by column

    cpdef truncate(self, Py_ssize_t n)
    @cython.locals(n=Py_ssize_t, nbytes=Py_ssize_t, root=arrow_array_p, k=int, address=Py_ssize_t, dictionary=tuple)
    cpdef object to_batch(self, object schema)
    cpdef int source_number(self, str source) except -1
    cpdef Py_ssize_t add(self, int source_id, int64_t game_index, int ply, int move_number, bint white, str san,
                         int frm, int to, int promotion, int kind, uint64_t checkers, int flags, int clock,
                         uint64_t zobrist, int repetition) except -1
    @cython.locals(i=Py_ssize_t, k=int, nbytes=Py_ssize_t, byte=Py_ssize_t, bit=uint8_t)
    cpdef Py_ssize_t add_key(self, int source_id, int64_t game_index, int ply, int move_number, bint white,
                             uint64_t san_key, str san, int frm, int to, int promotion, int kind, uint64_t checkers,
                             int flags, int clock, uint64_t zobrist, int repetition) except -1
    @cython.locals(j=Py_ssize_t)
    cdef inline int _add_key(self, uint64_t key) except -1
    @cython.locals(size=Py_ssize_t)
    cdef int _add_san(self, str san) except -1
    @cython.locals(j=Py_ssize_t, k=int)
    cdef inline int _add_uci(self, int frm, int to, int promotion) except -1
    @cython.locals(nbytes=Py_ssize_t, byte=Py_ssize_t, bit=uint8_t)
    cpdef int set_notes(self, Py_ssize_t i, int64_t clock, int64_t emt, int64_t cp, int64_t mate) except -1
    @cython.locals(j=Py_ssize_t, first=bint, sq=int)
    cdef int _add_checkers(self, uint64_t checkers) except -1
