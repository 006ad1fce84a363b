package main

import (
	"math"
	"os"
	"path/filepath"
	"testing"
)

// TestScore: a line counts for GA only when its predicted group is exactly
// its labelled one; PA compares templates with every placeholder as <*>.
func TestScore(t *testing.T) {
	rows := []row{
		{"a 1", "E1", "a <*>"}, {"a 2", "E1", "a <*>"},
		{"b x", "E2", "b <*>"}, {"c y", "E3", "c y"},
		{"d 1", "E4", "d <*>"}, {"d 2", "E4", "d <*>"},
	}
	got := []assigned{
		{Cluster: "k1", Template: "a <num>"}, {Cluster: "k1", Template: "a <num>"}, // E1 whole: 2
		{Cluster: "k2", Template: "<*> <*>"}, {Cluster: "k2", Template: "<*> <*>"}, // E2+E3 merged: 0
		{Cluster: "k3", Template: "d <num>"}, {Cluster: "k4", Template: "d 2"}, // E4 split: 0
	}
	r := score(rows, got)
	if math.Abs(r.ga-2.0/6) > 1e-9 || r.events != 4 {
		t.Errorf("GA %v over %d events, want 2/6 over 4", r.ga, r.events)
	}
	if math.Abs(r.pa-3.0/6) > 1e-9 { // a <num> twice, d <num> once
		t.Errorf("PA %v, want 3/6", r.pa)
	}
}

// TestReadCSV reads the columns by name, quoted fields included.
func TestReadCSV(t *testing.T) {
	p := filepath.Join(t.TempDir(), "X_2k.log_structured.csv")
	data := "LineId,Content,EventId,EventTemplate\n1,\"disk full, retry 3\",E1,\"disk full, retry <*>\"\n"
	if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	rows, err := readCSV(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0] != (row{"disk full, retry 3", "E1", "disk full, retry <*>"}) {
		t.Errorf("rows = %+v", rows)
	}
	if err := os.WriteFile(p, []byte("LineId,Text\n1,x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := readCSV(p); err == nil {
		t.Error("no error for a file without Content and EventId")
	}
}
