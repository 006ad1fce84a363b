package kb

import (
	"context"
	"errors"
	"path/filepath"

	"github.com/blevesearch/bleve/v2"
	bolterrors "go.etcd.io/bbolt/errors"
)

// openReadOnly is Open with opts.ReadOnly: no directory is created, no
// migration or index repair runs.
func openReadOnly(ctx context.Context, opts Options) (*KB, error) {
	k := newKB(opts)
	db, err := openDBReadOnly(ctx, filepath.Join(opts.Dir, DBFile))
	if err != nil {
		return nil, err
	}
	k.db = db
	if opts.WithoutIndex {
		return k, nil
	}
	dir := filepath.Join(opts.Dir, IndexDir)
	idx, err := bleve.OpenUsing(dir, map[string]any{"read_only": true, "bolt_timeout": opts.lockWait().String()})
	switch {
	case errors.Is(err, bolterrors.ErrTimeout):
		k.locked = true
		return k, nil
	case err != nil:
		// Missing or unreadable: lookups that need no index still work.
		k.log.Debug("no read-only index", "err", err)
		return k, nil
	}
	if v, err := idx.GetInternal([]byte("incidex_version")); err != nil || string(v) != indexVersion {
		_ = idx.Close()
		k.log.Debug("read-only index is from another version", "dir", dir)
		return k, nil
	}
	k.idx = idx
	return k, nil
}
