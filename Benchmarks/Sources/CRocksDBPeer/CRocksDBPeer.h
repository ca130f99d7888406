// The part of RocksDB's C API (rocksdb/c.h, 7.x) that strata-bench uses, as
// function-pointer types to fill with dlsym. Declarations only: see
// docs/decisions/2026-11-21-benchmark-peers.md for why the real header is not included.
#ifndef STRATA_CROCKSDB_PEER_H
#define STRATA_CROCKSDB_PEER_H

#include <stddef.h>

typedef struct rocksdb_t rocksdb_t;
typedef struct rocksdb_options_t rocksdb_options_t;
typedef struct rocksdb_readoptions_t rocksdb_readoptions_t;
typedef struct rocksdb_writeoptions_t rocksdb_writeoptions_t;
typedef struct rocksdb_writebatch_t rocksdb_writebatch_t;
typedef struct rocksdb_iterator_t rocksdb_iterator_t;

typedef rocksdb_t *(*rocksdb_open_fn)(const rocksdb_options_t *options, const char *name, char **errptr);
typedef void (*rocksdb_close_fn)(rocksdb_t *db);
typedef void (*rocksdb_write_fn)(rocksdb_t *db, const rocksdb_writeoptions_t *options,
                                 rocksdb_writebatch_t *batch, char **errptr);
typedef char *(*rocksdb_get_fn)(rocksdb_t *db, const rocksdb_readoptions_t *options,
                                const char *key, size_t keylen, size_t *vallen, char **errptr);
typedef void (*rocksdb_flush_wal_fn)(rocksdb_t *db, unsigned char sync, char **errptr);
typedef rocksdb_iterator_t *(*rocksdb_create_iterator_fn)(rocksdb_t *db, const rocksdb_readoptions_t *options);
typedef void (*rocksdb_compact_range_fn)(rocksdb_t *db, const char *start_key, size_t start_key_len,
                                         const char *limit_key, size_t limit_key_len);
typedef void (*rocksdb_iter_destroy_fn)(rocksdb_iterator_t *iterator);
typedef unsigned char (*rocksdb_iter_valid_fn)(const rocksdb_iterator_t *iterator);
typedef void (*rocksdb_iter_seek_to_first_fn)(rocksdb_iterator_t *iterator);
typedef void (*rocksdb_iter_next_fn)(rocksdb_iterator_t *iterator);
typedef const char *(*rocksdb_iter_value_fn)(const rocksdb_iterator_t *iterator, size_t *vlen);
typedef void (*rocksdb_iter_get_error_fn)(const rocksdb_iterator_t *iterator, char **errptr);
typedef rocksdb_writebatch_t *(*rocksdb_writebatch_create_fn)(void);
typedef void (*rocksdb_writebatch_destroy_fn)(rocksdb_writebatch_t *batch);
typedef void (*rocksdb_writebatch_put_fn)(rocksdb_writebatch_t *batch, const char *key, size_t klen,
                                          const char *val, size_t vlen);
typedef rocksdb_options_t *(*rocksdb_options_create_fn)(void);
typedef void (*rocksdb_options_destroy_fn)(rocksdb_options_t *options);
typedef void (*rocksdb_options_set_create_if_missing_fn)(rocksdb_options_t *options, unsigned char value);
typedef rocksdb_readoptions_t *(*rocksdb_readoptions_create_fn)(void);
typedef void (*rocksdb_readoptions_destroy_fn)(rocksdb_readoptions_t *options);
typedef rocksdb_writeoptions_t *(*rocksdb_writeoptions_create_fn)(void);
typedef void (*rocksdb_writeoptions_destroy_fn)(rocksdb_writeoptions_t *options);
typedef void (*rocksdb_writeoptions_set_sync_fn)(rocksdb_writeoptions_t *options, unsigned char value);
typedef void (*rocksdb_free_fn)(void *pointer);

#endif
