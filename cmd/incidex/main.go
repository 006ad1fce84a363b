// Command incidex is an incident knowledge base and log-signature matcher:
// it ingests incident write-ups and answers, for any log line, which known
// incident explains it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// Exit codes, following grep: 0 success (a match), 1 nothing found or a
// partial failure, 2 an error.
const (
	exitOK      = 0
	exitNone    = 1
	exitError   = 2
	exitUsage   = 2
	exitPartial = 1
)

// exitErr carries an exit code with the error that caused it. A nil err
// with a code is a silent exit (nothing matched).
type exitErr struct {
	code int
	err  error
}

func (e *exitErr) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit %d", e.code)
	}
	return e.err.Error()
}

func (e *exitErr) Unwrap() error { return e.err }

// env is what a command runs with: streams and the environment, so tests
// can run commands in-process.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
}

type command struct {
	name     string
	synopsis string
	run      func(ctx context.Context, e *env, args []string) error
	examples [2]string
}

func commands() []command {
	return []command{
		{"serve", "run the HTTP server: API, log-forwarder webhook, web UI", runServe, [2]string{
			"incidex serve",
			"INCIDEX_INGEST_TOKEN_FILE=/run/secrets/ingest INCIDEX_ADMIN_TOKEN_FILE=/run/secrets/admin incidex serve --addr 0.0.0.0:8080"}},
		{"ingest", "ingest write-up files or directories", runIngest, [2]string{
			"incidex ingest ./postmortems/",
			"incidex ingest --json incidents.txt"}},
		{"match", "find the incidents that explain log lines", runMatch, [2]string{
			"incidex match 'dial tcp 10.96.0.1:443: i/o timeout'",
			"kubectl logs -f ds/kube-flannel -n kube-flannel | incidex match -"}},
		{"search", "full-text search of the knowledge base", runSearch, [2]string{
			"incidex search subnet.env",
			"incidex search --syntax '+tags:dns -coredns' --json"}},
		{"show", "show one incident", runShow, [2]string{
			"incidex show oom-killed",
			"incidex show --json cni-not-initialized"}},
		{"list", "list incidents", runList, [2]string{
			"incidex list",
			"incidex list --tag dns --json"}},
		{"check", "check that every incident's examples match it and nothing else", runCheck, [2]string{
			"incidex check",
			"incidex check --strict ./postmortems"}},
		{"feedback", "say a match was right or wrong (up/down), or list feedback", runFeedback, [2]string{
			"incidex feedback up --incident oom-killed 'OOMKilled: container api exceeded its memory limit'",
			"incidex feedback list"}},
		{"mine", "cluster log lines into templates", runMine, [2]string{
			"journalctl -u kubelet --since -1h | incidex mine -",
			"incidex mine --json --max-clusters 200 - < app.log"}},
		{"reindex", "rebuild the search index from the database", runReindex, [2]string{
			"incidex reindex",
			"incidex reindex --data /var/lib/incidex"}},
		{"config", "print the effective configuration", runConfig, [2]string{
			"incidex config",
			"INCIDEX_DATA=/data incidex config --json"}},
		{"healthcheck", "check a running server (for container health checks)", runHealthcheck, [2]string{
			"incidex healthcheck",
			"incidex healthcheck --addr 127.0.0.1:9090"}},
		{"version", "print the version", runVersion, [2]string{
			"incidex version",
			"incidex --version"}},
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], &env{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv})
	stop()
	os.Exit(code)
}

// run runs one command line and returns the exit code. Errors are printed
// once, here, as one line.
func run(ctx context.Context, args []string, e *env) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(e.stderr)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	if args[0] == "--version" || args[0] == "-version" {
		args[0] = "version"
	}
	for _, c := range commands() {
		if c.name != args[0] {
			continue
		}
		err := c.run(ctx, e, args[1:])
		return report(e, c.name, err)
	}
	fmt.Fprintf(e.stderr, "incidex: unknown command %q (run 'incidex help')\n", args[0])
	return exitUsage
}

func report(e *env, name string, err error) int {
	if err == nil {
		return exitOK
	}
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	code := exitError
	var ee *exitErr
	if errors.As(err, &ee) {
		code = ee.code
		if ee.err == nil {
			return code
		}
	}
	fmt.Fprintf(e.stderr, "incidex %s: %s\n", name, oneLine(err.Error()))
	return code
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: incidex <command> [flags] [args]")
	fmt.Fprintln(w, "\ncommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-9s %s\n", c.name, c.synopsis)
	}
	fmt.Fprintln(w, "\nRun 'incidex <command> -h' for a command's flags. Data directory: --data or INCIDEX_DATA.")
}

// newFlags makes a command's flag set. -h prints to stdout what the
// command does, its flags and two examples; a bad flag is reported once, in
// one line, by report.
func newFlags(e *env, name, args string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {
		var c command
		for _, x := range commands() {
			if x.name == name {
				c = x
			}
		}
		fmt.Fprintf(e.stdout, "incidex %s: %s\n\nusage: incidex %s [flags] %s\n\nflags:\n", name, c.synopsis, name, args)
		fs.SetOutput(e.stdout)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
		fmt.Fprintf(e.stdout, "\nexamples:\n  %s\n  %s\n", c.examples[0], c.examples[1])
	}
	return fs
}

// parse parses flags anywhere among the arguments (incidex search
// subnet.env --json works), up to a "--" after which everything is an
// argument, and turns a bad flag into a usage error. fs.Args() holds the
// arguments afterwards.
func parse(fs *flag.FlagSet, args []string) error {
	var rest []string
	for i, a := range args {
		if a == "--" {
			args, rest = args[:i], args[i+1:]
			break
		}
	}
	for _, a := range args {
		if a == "-h" || a == "-help" || a == "--help" {
			fs.Usage()
			return flag.ErrHelp
		}
	}
	usage := fs.Usage
	fs.Usage = func() {}
	defer func() { fs.Usage = usage }()
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return err
			}
			return &exitErr{code: exitUsage, err: err}
		}
		args = fs.Args()
		if len(args) == 0 {
			break
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
	return fs.Parse(append([]string{"--"}, append(pos, rest...)...))
}

func usageErr(format string, a ...any) error {
	return &exitErr{code: exitUsage, err: fmt.Errorf(format, a...)}
}
