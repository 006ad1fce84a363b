package kb

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"
	"net/url"
	"path"
	"sort"

	_ "modernc.org/sqlite" // the pure-Go SQLite driver, registered as "sqlite"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// openDB opens the SQLite database at file with WAL, foreign keys and a busy
// timeout, and applies pending migrations. Transactions begin IMMEDIATE:
// every transaction here writes, and a deferred one that reads first fails
// with SQLITE_BUSY_SNAPSHOT (517), which the busy timeout does not retry,
// when another connection (the index's persisted callback clearing
// index_pending) commits between its read and its first write.
func openDB(ctx context.Context, file string) (*sql.DB, error) {
	dsn := "file:" + (&url.URL{Path: file}).EscapedPath() +
		"?_txlock=immediate&_pragma=busy_timeout(10000)&_pragma=journal_mode(wal)&_pragma=foreign_keys(1)&_pragma=synchronous(normal)"
	db, err := ping(ctx, dsn, file)
	if err != nil {
		return nil, err
	}
	if err := migrate(ctx, db); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("migrate database %s: %w", file, err)
	}
	return db, nil
}

// openDBReadOnly opens the database for reading only, on a data directory
// or a mount this process cannot write. A WAL database needs its -shm file;
// where that cannot be created, the file is opened as immutable (nothing
// can change it from here either). The schema must be current: migrating
// is a write.
func openDBReadOnly(ctx context.Context, file string) (*sql.DB, error) {
	base := "file:" + (&url.URL{Path: file}).EscapedPath() + "?mode=ro&_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)"
	db, err := ping(ctx, base, file)
	if err == nil {
		err = checkSchema(ctx, db)
		if err != nil {
			_ = db.Close()
		}
	}
	if err != nil {
		var e2 error
		if db, e2 = ping(ctx, base+"&immutable=1", file); e2 != nil {
			return nil, err
		}
		if err := checkSchema(ctx, db); err != nil {
			_ = db.Close()
			return nil, fmt.Errorf("open database %s read-only: %w", file, err)
		}
	}
	return db, nil
}

// checkSchema reads the schema version, which also proves the database
// file can be read, and refuses a schema that needs migrating.
func checkSchema(ctx context.Context, db *sql.DB) error {
	names, version, err := schemaVersion(ctx, db)
	if err != nil {
		return err
	}
	if version != len(names) {
		return fmt.Errorf("database is at schema version %d, this incidex knows %d: run a command that writes (incidex reindex) with write access first", version, len(names))
	}
	return nil
}

func ping(ctx context.Context, dsn, file string) (*sql.DB, error) {
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", file, err)
	}
	if err := db.PingContext(ctx); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("open database %s: %w", file, err)
	}
	return db, nil
}

// schemaVersion returns the embedded migrations in order and the
// database's schema version (PRAGMA user_version: how many have run).
func schemaVersion(ctx context.Context, db *sql.DB) (names []string, version int, err error) {
	if names, err = migrations(); err != nil {
		return nil, 0, err
	}
	err = db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version)
	return names, version, err
}

// migrations returns the embedded migrations in order.
func migrations() ([]string, error) {
	names, err := fs.Glob(migrationFS, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	return names, nil
}

// migrate applies the migrations past PRAGMA user_version, each in its own
// transaction together with the version bump.
func migrate(ctx context.Context, db *sql.DB) error {
	names, version, err := schemaVersion(ctx, db)
	if err != nil {
		return err
	}
	if version > len(names) {
		return fmt.Errorf("database is at schema version %d, this incidex knows %d: upgrade incidex", version, len(names))
	}
	for i := version; i < len(names); i++ {
		src, err := migrationFS.ReadFile(names[i])
		if err != nil {
			return err
		}
		if err := applyMigration(ctx, db, i+1, string(src)); err != nil {
			return fmt.Errorf("%s: %w", path.Base(names[i]), err)
		}
	}
	return nil
}

func applyMigration(ctx context.Context, db *sql.DB, version int, src string) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.ExecContext(ctx, src); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", version)); err != nil {
		return err
	}
	return tx.Commit()
}
