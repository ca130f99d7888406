// The part of LMDB's C API (lmdb.h, 0.9.x) that strata-bench uses, as function-pointer
// types to fill with dlsym. Declarations only: see
// docs/decisions/2026-11-21-benchmark-peers.md for why the real header is not included.
#ifndef STRATA_CLMDB_PEER_H
#define STRATA_CLMDB_PEER_H

#include <stddef.h>
#include <sys/types.h>

typedef struct MDB_env MDB_env;
typedef struct MDB_txn MDB_txn;
typedef struct MDB_cursor MDB_cursor;
typedef unsigned int MDB_dbi;

typedef struct MDB_val {
    size_t mv_size;
    void *mv_data;
} MDB_val;

/// The leading members of lmdb.h's MDB_cursor_op, with their values.
typedef enum MDB_cursor_op {
    MDB_FIRST = 0,
    MDB_NEXT = 8,
} MDB_cursor_op;

#define MDB_NOSYNC 0x10000
#define MDB_RDONLY 0x20000
#define MDB_SUCCESS 0
#define MDB_NOTFOUND (-30798)

typedef char *(*mdb_version_fn)(int *major, int *minor, int *patch);
typedef char *(*mdb_strerror_fn)(int err);
typedef int (*mdb_env_create_fn)(MDB_env **env);
typedef int (*mdb_env_set_mapsize_fn)(MDB_env *env, size_t size);
typedef int (*mdb_env_open_fn)(MDB_env *env, const char *path, unsigned int flags, mode_t mode);
typedef int (*mdb_env_sync_fn)(MDB_env *env, int force);
typedef void (*mdb_env_close_fn)(MDB_env *env);
typedef int (*mdb_txn_begin_fn)(MDB_env *env, MDB_txn *parent, unsigned int flags, MDB_txn **txn);
typedef int (*mdb_txn_commit_fn)(MDB_txn *txn);
typedef void (*mdb_txn_abort_fn)(MDB_txn *txn);
typedef void (*mdb_txn_reset_fn)(MDB_txn *txn);
typedef int (*mdb_txn_renew_fn)(MDB_txn *txn);
typedef int (*mdb_dbi_open_fn)(MDB_txn *txn, const char *name, unsigned int flags, MDB_dbi *dbi);
typedef int (*mdb_get_fn)(MDB_txn *txn, MDB_dbi dbi, MDB_val *key, MDB_val *data);
typedef int (*mdb_put_fn)(MDB_txn *txn, MDB_dbi dbi, MDB_val *key, MDB_val *data, unsigned int flags);
typedef int (*mdb_cursor_open_fn)(MDB_txn *txn, MDB_dbi dbi, MDB_cursor **cursor);
typedef void (*mdb_cursor_close_fn)(MDB_cursor *cursor);
typedef int (*mdb_cursor_get_fn)(MDB_cursor *cursor, MDB_val *key, MDB_val *data, MDB_cursor_op op);

#endif
