package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/incidex/incidex/kb"
)

// client talks to a running incidex serve over its JSON API.
type client struct {
	base  string
	token string
	http  *http.Client
}

func newClient(cfg Config) *client {
	tok := cfg.ReadToken
	if tok == "" {
		tok = cfg.AdminToken
	}
	return &client{base: strings.TrimRight(cfg.Server, "/"), token: tok, http: &http.Client{Timeout: 30 * time.Second}}
}

// serveInfo is written by serve into the data directory so CLI commands on
// the same directory can find it.
type serveInfo struct {
	URL string `json:"url"`
	PID int    `json:"pid"`
}

const serveInfoFile = "serve.json"

// discoverServer returns the URL of the serve process that holds dataDir,
// or "" when none answers.
func discoverServer(dataDir string) string {
	b, err := os.ReadFile(filepath.Join(dataDir, serveInfoFile))
	if err != nil {
		return ""
	}
	var si serveInfo
	if json.Unmarshal(b, &si) != nil || si.URL == "" {
		return ""
	}
	c := &http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get(si.URL + "/healthz")
	if err != nil {
		return ""
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return ""
	}
	return si.URL
}

func (c *client) do(ctx context.Context, method, path string, body any, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return fmt.Errorf("server %s: %w", c.base, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("server %s: %w", c.base, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return fmt.Errorf("server %s: %w", c.base, err)
	}
	if resp.StatusCode/100 != 2 {
		var e struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(b, &e) == nil && e.Error != "" {
			return fmt.Errorf("server %s: %s (HTTP %d)", c.base, e.Error, resp.StatusCode)
		}
		return fmt.Errorf("server %s: HTTP %d", c.base, resp.StatusCode)
	}
	return json.Unmarshal(b, out)
}

func (c *client) search(ctx context.Context, r kb.SearchRequest) (*kb.SearchResult, error) {
	q := url.Values{"q": {r.Query}, "n": {strconv.Itoa(max(r.Size, 1))}}
	if r.Syntax {
		q.Set("syntax", "bleve")
	}
	if r.All {
		q.Set("all", "1")
	}
	var res kb.SearchResult
	err := c.do(ctx, http.MethodGet, "/api/v1/search?"+q.Encode(), nil, &res)
	return &res, err
}

// matchRequest is the body of POST /api/v1/match.
type matchRequest struct {
	Lines    []string `json:"lines"`
	Mode     string   `json:"mode,omitempty"` // "stream" or "query"
	MinScore float64  `json:"min_score,omitempty"`
	Top      int      `json:"top,omitempty"`
	Explain  bool     `json:"explain,omitempty"`
}

// matchResponse is its answer: one result per input line.
type matchResponse struct {
	Results []lineResult `json:"results"`
}

func (c *client) match(ctx context.Context, r matchRequest) (*matchResponse, error) {
	var res matchResponse
	err := c.do(ctx, http.MethodPost, "/api/v1/match", r, &res)
	return &res, err
}
