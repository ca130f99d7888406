// The part of LevelDB's C API (leveldb/c.h, 1.x) that strata-bench uses, as
// function-pointer types to fill with dlsym. Declarations only: see
// docs/decisions/2026-11-21-benchmark-peers.md for why the real header is not included.
#ifndef STRATA_CLEVELDB_PEER_H
#define STRATA_CLEVELDB_PEER_H

#include <stddef.h>
#include <stdint.h>

typedef struct leveldb_t leveldb_t;
typedef struct leveldb_options_t leveldb_options_t;
typedef struct leveldb_readoptions_t leveldb_readoptions_t;
typedef struct leveldb_writeoptions_t leveldb_writeoptions_t;
typedef struct leveldb_writebatch_t leveldb_writebatch_t;
typedef struct leveldb_iterator_t leveldb_iterator_t;

typedef int (*leveldb_major_version_fn)(void);
typedef int (*leveldb_minor_version_fn)(void);
typedef leveldb_t *(*leveldb_open_fn)(const leveldb_options_t *options, const char *name, char **errptr);
typedef void (*leveldb_close_fn)(leveldb_t *db);
typedef void (*leveldb_write_fn)(leveldb_t *db, const leveldb_writeoptions_t *options,
                                 leveldb_writebatch_t *batch, char **errptr);
typedef char *(*leveldb_get_fn)(leveldb_t *db, const leveldb_readoptions_t *options,
                                const char *key, size_t keylen, size_t *vallen, char **errptr);
typedef leveldb_iterator_t *(*leveldb_create_iterator_fn)(leveldb_t *db, const leveldb_readoptions_t *options);
typedef void (*leveldb_compact_range_fn)(leveldb_t *db, const char *start_key, size_t start_key_len,
                                         const char *limit_key, size_t limit_key_len);
typedef void (*leveldb_iter_destroy_fn)(leveldb_iterator_t *iterator);
typedef uint8_t (*leveldb_iter_valid_fn)(const leveldb_iterator_t *iterator);
typedef void (*leveldb_iter_seek_to_first_fn)(leveldb_iterator_t *iterator);
typedef void (*leveldb_iter_next_fn)(leveldb_iterator_t *iterator);
typedef const char *(*leveldb_iter_value_fn)(const leveldb_iterator_t *iterator, size_t *vlen);
typedef void (*leveldb_iter_get_error_fn)(const leveldb_iterator_t *iterator, char **errptr);
typedef leveldb_writebatch_t *(*leveldb_writebatch_create_fn)(void);
typedef void (*leveldb_writebatch_destroy_fn)(leveldb_writebatch_t *batch);
typedef void (*leveldb_writebatch_put_fn)(leveldb_writebatch_t *batch, const char *key, size_t klen,
                                          const char *val, size_t vlen);
typedef leveldb_options_t *(*leveldb_options_create_fn)(void);
typedef void (*leveldb_options_destroy_fn)(leveldb_options_t *options);
typedef void (*leveldb_options_set_create_if_missing_fn)(leveldb_options_t *options, uint8_t value);
typedef leveldb_readoptions_t *(*leveldb_readoptions_create_fn)(void);
typedef void (*leveldb_readoptions_destroy_fn)(leveldb_readoptions_t *options);
typedef leveldb_writeoptions_t *(*leveldb_writeoptions_create_fn)(void);
typedef void (*leveldb_writeoptions_destroy_fn)(leveldb_writeoptions_t *options);
typedef void (*leveldb_writeoptions_set_sync_fn)(leveldb_writeoptions_t *options, uint8_t value);
typedef void (*leveldb_free_fn)(void *pointer);

#endif
