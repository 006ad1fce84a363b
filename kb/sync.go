package kb

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// indexBatch bounds how many incidents go into one index batch.
const indexBatch = 1000

// indexIDs brings the index entries of ids in line with SQLite, then clears
// their index_pending rows. Without an index it leaves the rows for the
// process that holds the index.
func (k *KB) indexIDs(ctx context.Context, ids []string) error {
	return k.indexKnown(ctx, ids, nil)
}

// indexKnown is indexIDs with the incidents already in memory (a write
// that just stored them); ids not in known are read from SQLite.
func (k *KB) indexKnown(ctx context.Context, ids []string, known map[string]*Incident) error {
	if k.idx == nil || len(ids) == 0 {
		return nil
	}
	for start := 0; start < len(ids); start += indexBatch {
		end := min(start+indexBatch, len(ids))
		if err := k.indexChunk(ctx, ids[start:end], known); err != nil {
			return err
		}
	}
	return nil
}

func (k *KB) indexChunk(ctx context.Context, ids []string, known map[string]*Incident) error {
	b := k.idx.NewBatch()
	for _, id := range ids {
		inc, err := known[id], error(nil)
		if inc == nil {
			inc, err = getIncident(ctx, k.db, id)
		}
		switch {
		case errors.Is(err, ErrNotFound):
			b.Delete(id)
		case err != nil:
			return err
		default:
			if err := b.Index(id, toDocument(inc)); err != nil {
				return fmt.Errorf("index incident %s: %w", id, err)
			}
		}
	}
	// The batch is searchable when Batch returns; it is durable when the
	// index persists it, and only then are its pending rows cleared (rows
	// written again since keep a newer seq and stay).
	seq, err := k.Generation(ctx)
	if err != nil {
		return err
	}
	persisted := k.persisting.start()
	b.SetPersistedCallback(func(err error) {
		defer persisted()
		if err != nil {
			k.log.Warn("index batch not persisted; replayed at next start", "err", err)
			return
		}
		if err := k.clearPending(context.Background(), ids, seq); err != nil {
			k.log.Warn("clear index_pending; replayed at next start", "err", err)
		}
	})
	if err := k.idx.Batch(b); err != nil {
		persisted()
		return fmt.Errorf("index batch: %w", err)
	}
	return nil
}

func (k *KB) clearPending(ctx context.Context, ids []string, seq int64) error {
	tx, err := k.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	for _, id := range ids {
		if _, err := tx.ExecContext(ctx, "DELETE FROM index_pending WHERE incident_id = ? AND seq <= ?", id, seq); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// SyncPending indexes incidents that were written without the index (by a
// crash between the two writes, or by another process while this one held
// the index). It returns how many it synced.
func (k *KB) SyncPending(ctx context.Context) (int, error) {
	if k.idx == nil {
		return 0, nil
	}
	rows, err := k.db.QueryContext(ctx, "SELECT incident_id FROM index_pending")
	if err != nil {
		return 0, err
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			_ = rows.Close()
			return 0, err
		}
		ids = append(ids, id)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return 0, err
	}
	return len(ids), k.indexIDs(ctx, ids)
}

// repairIndex makes the index agree with SQLite at open: pending writes are
// replayed, and a count mismatch (an index restored from elsewhere, a lost
// pending row) triggers a full rebuild.
func (k *KB) repairIndex(ctx context.Context, fresh bool) error {
	if fresh {
		return k.Reindex(ctx)
	}
	n, err := k.SyncPending(ctx)
	if err != nil {
		return fmt.Errorf("replay index writes: %w", err)
	}
	if n > 0 {
		k.log.Info("index writes replayed", "incidents", n)
	}
	dbCount, err := k.Count(ctx)
	if err != nil {
		return err
	}
	idxCount, err := k.idx.DocCount()
	if err != nil {
		return err
	}
	if uint64(dbCount) != idxCount {
		k.log.Warn("index disagrees with database, rebuilding", "database", dbCount, "index", idxCount)
		return k.Reindex(ctx)
	}
	return nil
}

// Reindex rebuilds the index from SQLite: every incident is indexed again
// and index entries without an incident are deleted.
func (k *KB) Reindex(ctx context.Context) error {
	if k.idx == nil {
		return fmt.Errorf("reindex: %w", ErrIndexLocked)
	}
	ids, err := k.allIDs(ctx)
	if err != nil {
		return err
	}
	want := make(map[string]bool, len(ids))
	for _, id := range ids {
		want[id] = true
	}
	stale, err := k.indexedIDs()
	if err != nil {
		return err
	}
	for _, id := range stale {
		if !want[id] {
			ids = append(ids, id)
		}
	}
	if err := k.indexIDs(ctx, ids); err != nil {
		return err
	}
	k.log.Info("index rebuilt", "incidents", len(want))
	return nil
}

func (k *KB) allIDs(ctx context.Context) ([]string, error) {
	rows, err := k.db.QueryContext(ctx, "SELECT id FROM incidents ORDER BY id")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// indexedIDs lists the document ids in the index.
func (k *KB) indexedIDs() ([]string, error) {
	n, err := k.idx.DocCount()
	if err != nil || n == 0 {
		return nil, err
	}
	req := newMatchAllRequest(int(n))
	res, err := k.idx.Search(req)
	if err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(res.Hits))
	for _, h := range res.Hits {
		ids = append(ids, strings.Clone(h.ID))
	}
	return ids, nil
}
