package kb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/blevesearch/bleve/v2"
)

// Options configure Open. The zero value (with Dir set) is valid.
type Options struct {
	// Dir is the data directory; it is created when missing.
	Dir string
	// Logger receives lifecycle messages; nil discards them.
	Logger *slog.Logger
	// WithoutIndex opens SQLite only, for commands that do not search.
	WithoutIndex bool
	// IndexOptional opens without the index when another process holds it
	// (Search then returns ErrIndexLocked; writes are indexed by the holder,
	// which picks them up from index_pending).
	IndexOptional bool
	// ReadOnly opens for lookups only, on a data directory this process
	// cannot write: the database read-only, the index read-only when it is
	// there and current, else none (Search then returns ErrIndexLocked).
	// Nothing is repaired or migrated; writes fail.
	ReadOnly bool
	// LockWait is how long to wait for the index lock. Default 1s.
	LockWait time.Duration
	// Now returns the current time; default time.Now.
	Now func() time.Time
}

// KB is the knowledge base: SQLite first, then the index.
type KB struct {
	db     *sql.DB
	idx    bleve.Index // nil when opened without the index
	dir    string
	log    *slog.Logger
	now    func() time.Time
	locked bool // the index exists but another process holds it

	// persisting counts index batches searchable but not yet persisted;
	// Close waits for them (see closeIndex).
	persisting inFlight

	closeOnce sync.Once
	closeErr  error
}

// File names inside the data directory.
const (
	DBFile    = "incidex.db"
	IndexDir  = "index.bleve"
	dirPerms  = 0o750
	lockWaitD = time.Second
)

// newKB is a KB of opts with its logger and clock set, not yet opened.
func newKB(opts Options) *KB {
	k := &KB{dir: opts.Dir, log: opts.Logger, now: opts.Now}
	if k.log == nil {
		k.log = slog.New(slog.DiscardHandler)
	}
	k.log = k.log.With("component", "kb")
	if k.now == nil {
		k.now = time.Now
	}
	return k
}

// lockWait is how long to wait for the index's file lock.
func (o Options) lockWait() time.Duration {
	if o.LockWait <= 0 {
		return lockWaitD
	}
	return o.LockWait
}

// Open opens (creating if needed) the knowledge base in opts.Dir. It replays
// index writes that a crash interrupted and rebuilds the index when it is
// missing, from another mapping version, or disagrees with SQLite.
func Open(ctx context.Context, opts Options) (*KB, error) {
	if opts.Dir == "" {
		return nil, &ValidationError{Field: "dir", Msg: "is empty"}
	}
	if opts.ReadOnly {
		return openReadOnly(ctx, opts)
	}
	if err := os.MkdirAll(opts.Dir, dirPerms); err != nil {
		return nil, fmt.Errorf("create data directory: %w", err)
	}
	k := newKB(opts)
	db, err := openDB(ctx, filepath.Join(opts.Dir, DBFile))
	if err != nil {
		return nil, err
	}
	k.db = db
	if opts.WithoutIndex {
		return k, nil
	}
	idx, fresh, err := openIndex(filepath.Join(opts.Dir, IndexDir), opts.lockWait().String())
	if errors.Is(err, ErrIndexLocked) && opts.IndexOptional {
		k.locked = true
		return k, nil
	}
	if err != nil {
		_ = db.Close()
		return nil, err
	}
	k.idx = idx
	if err := k.repairIndex(ctx, fresh); err != nil {
		_ = k.Close()
		return nil, err
	}
	return k, nil
}

// Close closes the index and the database. Closing twice is harmless.
func (k *KB) Close() error {
	k.closeOnce.Do(func() {
		var errs []error
		if k.idx != nil {
			errs = append(errs, k.closeIndex())
		}
		errs = append(errs, k.db.Close())
		k.closeErr = errors.Join(errs...)
	})
	return k.closeErr
}

// persistWait bounds how long Close waits for the index to persist.
const persistWait = 30 * time.Second

// closeIndex waits for the batches not yet persisted, then closes the
// index. Closing the index drops what it has not persisted; the writable
// open after it would replay index_pending, but a read-only open cannot,
// and would search an index with incidents missing. If the wait runs out
// the rows stay and the next writable open replays them.
func (k *KB) closeIndex() error {
	select {
	case <-k.persisting.drained():
	case <-time.After(persistWait):
		k.log.Warn("index not persisted before close; replayed at next start", "waited", persistWait)
	}
	return k.idx.Close()
}

// inFlight counts operations under way and tells when none is. Unlike a
// sync.WaitGroup, an operation may start while someone waits: a write that
// races with Close is waited for, or not, but is never a misuse.
type inFlight struct {
	mu   sync.Mutex
	n    int
	zero chan struct{} // closed when n drops to 0; nil while n is 0
}

// start counts one more operation, and returns the function that ends it
// (calling it more than once is harmless).
func (f *inFlight) start() func() {
	f.mu.Lock()
	if f.n == 0 {
		f.zero = make(chan struct{})
	}
	f.n++
	f.mu.Unlock()
	return sync.OnceFunc(func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.n--; f.n == 0 {
			close(f.zero)
			f.zero = nil
		}
	})
}

// drained returns a channel closed once no operation is under way.
func (f *inFlight) drained() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.n == 0 {
		c := make(chan struct{})
		close(c)
		return c
	}
	return f.zero
}

// Dir returns the data directory.
func (k *KB) Dir() string { return k.dir }

// HasIndex reports whether this process holds the search index.
func (k *KB) HasIndex() bool { return k.idx != nil }

// IndexLocked reports whether another process holds the search index.
func (k *KB) IndexLocked() bool { return k.locked }

// DB exposes the database handle to other stores of this package's data
// (occurrences, patterns) that live in the same file.
func (k *KB) DB() *sql.DB { return k.db }

// Write stores the writes in one transaction, then indexes what changed.
func (k *KB) Write(ctx context.Context, ws ...Write) error {
	touched, err := storeWrites(ctx, k.db, ws, k.now().UTC())
	if err != nil {
		return err
	}
	known := make(map[string]*Incident)
	for _, w := range ws {
		for _, inc := range w.Incidents {
			known[inc.ID] = inc
		}
	}
	return k.indexKnown(ctx, touched, known)
}

// Put stores one incident that has no source file (an API upload).
func (k *KB) Put(ctx context.Context, inc *Incident) error {
	return k.Write(ctx, Write{Source: Source{Path: inc.Source}, Incidents: []*Incident{inc}, Replace: true})
}

// Delete removes an incident and its signatures.
func (k *KB) Delete(ctx context.Context, id string) error {
	tx, err := k.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	if err := deleteIncident(ctx, tx, id, ""); err != nil {
		if errors.Is(err, ErrNotFound) {
			return fmt.Errorf("incident %q: %w", id, ErrNotFound)
		}
		return err
	}
	if _, err := tx.ExecContext(ctx, "UPDATE sources SET incident_ids = trim(replace(char(10) || incident_ids || char(10), char(10) || ? || char(10), char(10)), char(10))", id); err != nil {
		return err
	}
	if err := bumpGeneration(ctx, tx); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	return k.indexIDs(ctx, []string{id})
}

// Get returns one incident with its signatures.
func (k *KB) Get(ctx context.Context, id string) (*Incident, error) {
	return getIncident(ctx, k.db, id)
}

// List returns incident summaries, optionally only those with tag.
func (k *KB) List(ctx context.Context, tag string) ([]Summary, error) {
	return listSummaries(ctx, k.db, tag)
}

// Signatures returns every signature, ordered by incident.
func (k *KB) Signatures(ctx context.Context) ([]Signature, error) {
	return listSignatures(ctx, k.db, "")
}

// SourceHash returns the content hash recorded for a source path, or "".
func (k *KB) SourceHash(ctx context.Context, path string) (string, error) {
	return sourceHash(ctx, k.db, path)
}

// Generation changes whenever an incident is written or deleted, by any
// process: a server polls it to reload its matcher.
func (k *KB) Generation(ctx context.Context) (int64, error) {
	return generation(ctx, k.db)
}

// Count returns the number of incidents.
func (k *KB) Count(ctx context.Context) (int, error) {
	var n int
	err := k.db.QueryRowContext(ctx, "SELECT count(*) FROM incidents").Scan(&n)
	return n, err
}
