// RocksDB's function table, from its C API (shim: Sources/CRocksDBPeer).
import CRocksDBPeer
import PeerSupport

extension LSMEngine {
    static func rocksDB() throws -> LSMEngine {
        let library = try PeerLibrary(engine: "rocksdb",
                                      sonames: ["librocksdb.so.7.8", "librocksdb.so", "librocksdb.dylib"],
                                      debianPackage: "librocksdb-dev")
        let api = LSMAPI(
            engine: "rocksdb",
            open: try library.function("rocksdb_open", as: rocksdb_open_fn.self),
            close: try library.function("rocksdb_close", as: rocksdb_close_fn.self),
            write: try library.function("rocksdb_write", as: rocksdb_write_fn.self),
            get: try library.function("rocksdb_get", as: rocksdb_get_fn.self),
            createIterator: try library.function("rocksdb_create_iterator", as: rocksdb_create_iterator_fn.self),
            compactRange: try library.function("rocksdb_compact_range", as: rocksdb_compact_range_fn.self),
            iterDestroy: try library.function("rocksdb_iter_destroy", as: rocksdb_iter_destroy_fn.self),
            iterValid: try library.function("rocksdb_iter_valid", as: rocksdb_iter_valid_fn.self),
            iterSeekToFirst: try library.function("rocksdb_iter_seek_to_first", as: rocksdb_iter_seek_to_first_fn.self),
            iterNext: try library.function("rocksdb_iter_next", as: rocksdb_iter_next_fn.self),
            iterValue: try library.function("rocksdb_iter_value", as: rocksdb_iter_value_fn.self),
            iterGetError: try library.function("rocksdb_iter_get_error", as: rocksdb_iter_get_error_fn.self),
            writebatchCreate: try library.function("rocksdb_writebatch_create", as: rocksdb_writebatch_create_fn.self),
            writebatchDestroy: try library.function("rocksdb_writebatch_destroy", as: rocksdb_writebatch_destroy_fn.self),
            writebatchPut: try library.function("rocksdb_writebatch_put", as: rocksdb_writebatch_put_fn.self),
            optionsCreate: try library.function("rocksdb_options_create", as: rocksdb_options_create_fn.self),
            optionsDestroy: try library.function("rocksdb_options_destroy", as: rocksdb_options_destroy_fn.self),
            optionsSetCreateIfMissing: try library.function("rocksdb_options_set_create_if_missing",
                                                            as: rocksdb_options_set_create_if_missing_fn.self),
            readoptionsCreate: try library.function("rocksdb_readoptions_create", as: rocksdb_readoptions_create_fn.self),
            readoptionsDestroy: try library.function("rocksdb_readoptions_destroy", as: rocksdb_readoptions_destroy_fn.self),
            writeoptionsCreate: try library.function("rocksdb_writeoptions_create", as: rocksdb_writeoptions_create_fn.self),
            writeoptionsDestroy: try library.function("rocksdb_writeoptions_destroy", as: rocksdb_writeoptions_destroy_fn.self),
            writeoptionsSetSync: try library.function("rocksdb_writeoptions_set_sync", as: rocksdb_writeoptions_set_sync_fn.self),
            free: try library.function("rocksdb_free", as: rocksdb_free_fn.self),
            flushWAL: try library.function("rocksdb_flush_wal", as: rocksdb_flush_wal_fn.self))
        let version = library.sonameVersion ?? ""
        return LSMEngine(api: api, name: "rocksdb", displayName: "RocksDB", version: version)
    }
}
