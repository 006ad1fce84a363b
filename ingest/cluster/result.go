// Package cluster carries the scaled-out roles' traffic over NATS
// JetStream beyond the records queue: the results a worker publishes for
// each records message, and the knowledge-base writer that applies them
// exactly once.
//
// Exactly-once lives in the writer. A records message can be finished by
// two workers (the duplicate window forgets the ids of deleted messages
// when the server restarts, nats-server#3272, and a late ack is accepted
// after redelivery, #4786), so two results can arrive for one records
// sequence. The writer applies a result only if its sequence is not in its
// AppliedSet, and stores the set in the same SQLite transaction as the
// occurrence counts.
package cluster

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/incidex/incidex/kb"
)

// Names of the results stream, its subject and the writer's consumer.
const (
	ResultsStream   = "INCIDEX_RESULTS"
	ResultsSubject  = "incidex.results"
	WriterConsumer  = "incidex-writer"
	resultMsgPrefix = "res-"
)

// Result is what a worker publishes for one records message.
type Result struct {
	// Seq is the records message's records-stream sequence.
	Seq uint64 `json:"seq"`
	// Epoch names the records stream Seq is of: its creation time in Unix
	// nanoseconds (0 from workers that did not say). A stream deleted and
	// created again numbers its messages from 1 again; the epoch keeps
	// the writer from taking them for ones it applied (see Applier).
	Epoch int64 `json:"epoch,omitempty"`
	// Obs are the matches, aggregated per signature × resource × minute.
	Obs []Agg `json:"obs,omitempty"`
	// Unmatched are the error lines that matched nothing, deduplicated.
	Unmatched []Line `json:"unmatched,omitempty"`
	// Records is the number of records in the message (0 when unknown).
	Records int `json:"records,omitempty"`
	// Tombstone marks a dead-lettered records message: it counts nothing
	// but its sequence is applied, so the writer's floor advances.
	Tombstone bool   `json:"tombstone,omitempty"`
	Reason    string `json:"reason,omitempty"`
}

// Agg is the observations of one signature on one resource in one minute.
type Agg struct {
	IncidentID  string            `json:"incident"`
	SignatureID string            `json:"signature"`
	Resource    string            `json:"resource"`
	Labels      map[string]string `json:"labels,omitempty"`
	// Minute is the Unix minute of First.
	Minute  int64     `json:"minute"`
	Count   int64     `json:"count"`
	First   time.Time `json:"first"`
	Last    time.Time `json:"last"`
	Samples []string  `json:"samples,omitempty"` // at most maxSamples
	Format  string    `json:"format,omitempty"`
	Score   float64   `json:"score"` // the best
}

// Line is an error line that matched nothing, with the number of times it
// occurred in the records message.
type Line struct {
	Time    time.Time         `json:"time"`
	Message string            `json:"message"`
	Labels  map[string]string `json:"labels,omitempty"`
	Count   int64             `json:"count"`
}

// maxSamples is the number of sample lines an Agg keeps, as many as an
// occurrence shows.
const maxSamples = 5

// Aggregate folds matches into one Agg per signature, resource and minute,
// in order of first appearance.
func Aggregate(obs []kb.Observation) []Agg {
	type key struct {
		sig, res string
		minute   int64
	}
	idx := make(map[key]int, len(obs)/8+1)
	var out []Agg
	for _, o := range obs {
		res := o.Resource
		if res == "" {
			res = "-"
		}
		k := key{o.SignatureID, res, o.Time.Unix() / 60}
		i, ok := idx[k]
		if !ok {
			idx[k] = len(out)
			out = append(out, Agg{IncidentID: o.IncidentID, SignatureID: o.SignatureID, Resource: res, Labels: o.Labels,
				Minute: k.minute, First: o.Time, Last: o.Time, Format: o.Format, Score: o.Score})
			i = len(out) - 1
		}
		a := &out[i]
		a.Count += max(o.Count, 1)
		last := o.Last
		if last.Before(o.Time) {
			last = o.Time
		}
		if o.Time.Before(a.First) {
			a.First = o.Time
		}
		if last.After(a.Last) {
			a.Last = last
		}
		a.Score = max(a.Score, o.Score)
		samples := o.Samples
		if samples == nil {
			samples = []string{o.Message}
		}
		for _, s := range samples {
			if len(a.Samples) < maxSamples {
				a.Samples = append(a.Samples, s)
			}
		}
	}
	return out
}

// Observations turns aggregates back into the knowledge base's
// observations (one per aggregate, with its count).
func Observations(aggs []Agg) []kb.Observation {
	out := make([]kb.Observation, len(aggs))
	for i, a := range aggs {
		out[i] = kb.Observation{Time: a.First, Last: a.Last, Count: max(a.Count, 1), IncidentID: a.IncidentID,
			SignatureID: a.SignatureID, Score: a.Score, Labels: a.Labels, Resource: a.Resource, Format: a.Format,
			Samples: a.Samples}
		if out[i].Samples == nil {
			out[i].Samples = []string{}
		}
	}
	return out
}

// Dedup folds identical unmatched lines (same message, same labels) into
// one Line with a count, keeping the earliest time.
func Dedup(lines []kb.UnmatchedLine) []Line {
	idx := make(map[string]int, len(lines))
	var out []Line
	var b strings.Builder
	for _, l := range lines {
		b.Reset()
		b.WriteString(l.Message)
		b.WriteByte(0)
		b.WriteString(labelsKey(l.Labels))
		k := b.String()
		i, ok := idx[k]
		if !ok {
			idx[k] = len(out)
			out = append(out, Line{Time: l.Time, Message: l.Message, Labels: l.Labels})
			i = len(out) - 1
		}
		out[i].Count += max(l.Count, 1)
		if l.Time.Before(out[i].Time) {
			out[i].Time = l.Time
		}
	}
	return out
}

func labelsKey(labels map[string]string) string {
	if len(labels) == 0 {
		return ""
	}
	if len(labels) == 1 {
		for k, v := range labels {
			return k + "=" + v
		}
	}
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(labels[k])
		b.WriteByte(0)
	}
	return b.String()
}

// UnmatchedLines turns deduplicated lines back into the miner's input.
func UnmatchedLines(lines []Line) []kb.UnmatchedLine {
	out := make([]kb.UnmatchedLine, len(lines))
	for i, l := range lines {
		out[i] = kb.UnmatchedLine{Time: l.Time, Message: l.Message, Labels: l.Labels, Count: max(l.Count, 1)}
	}
	return out
}

// ensureResults creates or updates the results stream. It is a work
// queue: the writer acknowledges a result only once the transaction that
// applied it has committed, and the ack deletes it, so the stream holds
// exactly the results not yet applied (the purge below the floor happens
// message by message, with nothing to compute).
func ensureResults(ctx context.Context, js jetstream.JetStream, dupWindow time.Duration, maxBytes int64) error {
	if dupWindow <= 0 {
		dupWindow = 2 * time.Minute
	}
	cfg := jetstream.StreamConfig{
		Name: ResultsStream, Subjects: []string{ResultsSubject}, Storage: jetstream.FileStorage,
		Retention: jetstream.WorkQueuePolicy, Discard: jetstream.DiscardNew, Duplicates: dupWindow, MaxBytes: maxBytes,
	}
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = -1
	}
	_, err := js.CreateOrUpdateStream(ctx, cfg)
	if err != nil {
		return fmt.Errorf("ensure stream %s: %w", ResultsStream, err)
	}
	return nil
}

var errBadCheckpoint = errors.New("checkpoint is not a records-stream sequence")
