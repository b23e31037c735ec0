// testd is the program in the node fixture's test images (app, sidecar, crash): it says who it is
// and which version it runs on stdout, the kubelet's container log, so a test reads it from the
// node's pod-logs folder. Its image's config sets TESTD_VERSION (and TESTD_CRASH for the image that
// crash-loops); the pod's spec may set the rest.
//
//	testd         run until SIGTERM or SIGINT
//	testd ready   the readiness probe: exit 0 once the running testd has marked itself ready
//
// Environment:
//
//	NAME               the name it logs (default "testd")
//	TESTD_VERSION      the version it logs (set by the image)
//	TESTD_CRASH        "1": exit 1 half a second after starting (a crash-looping image)
//	TESTD_READY_AFTER  a Go duration: become ready only after this long (default 0)
//	TESTD_EXIT_AFTER   a Go duration: exit 0 after this long (a Job's container); default never
//	TESTD_SHARE_DIR    a folder (a shared volume): write NAME there, then log the names found there
//	TZ                 logged as it is, to show a transferred environment variable
package main

import (
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"
)

const readyFile = "/tmp/testd-ready"

func main() {
	if len(os.Args) > 1 && os.Args[1] == "ready" {
		if _, err := os.Stat(readyFile); err != nil {
			os.Exit(1)
		}
		return
	}
	run()
}

func run() {
	name := envOr("NAME", "testd")
	version := envOr("TESTD_VERSION", "unknown")
	say := func(format string, args ...any) {
		fmt.Printf("testd name=%s version=%s %s\n", name, version, fmt.Sprintf(format, args...))
	}
	say("started pid=%d TZ=%s", os.Getpid(), os.Getenv("TZ"))
	// A container restarted in place keeps its writable layer only if the runtime reuses it; it
	// does not, but a stale mark must never make a new process look ready.
	_ = os.Remove(readyFile)

	if os.Getenv("TESTD_CRASH") == "1" {
		time.Sleep(500 * time.Millisecond)
		say("crashing")
		os.Exit(1)
	}

	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
	readyAfter, err := time.ParseDuration(envOr("TESTD_READY_AFTER", "0s"))
	if err != nil {
		say("bad TESTD_READY_AFTER: %v", err)
		os.Exit(2)
	}
	ready := time.After(readyAfter)
	var exit <-chan time.Time
	if after := os.Getenv("TESTD_EXIT_AFTER"); after != "" {
		d, err := time.ParseDuration(after)
		if err != nil {
			say("bad TESTD_EXIT_AFTER: %v", err)
			os.Exit(2)
		}
		exit = time.After(d)
	}
	shareDir := os.Getenv("TESTD_SHARE_DIR")
	heartbeat := time.NewTicker(2 * time.Second)
	defer heartbeat.Stop()
	share(say, shareDir, name, version)
	for {
		select {
		case s := <-signals:
			say("stopping on %v", s)
			return
		case <-exit:
			say("done")
			return
		case <-ready:
			if err := os.WriteFile(readyFile, []byte(version), 0o644); err != nil {
				say("cannot mark ready: %v", err)
				os.Exit(2)
			}
			say("ready")
		case <-heartbeat.C:
			share(say, shareDir, name, version)
		}
	}
}

// share writes NAME into the shared folder and logs what every container sharing it wrote.
func share(say func(string, ...any), dir, name, version string) {
	if dir == "" {
		return
	}
	if err := os.WriteFile(filepath.Join(dir, name), []byte(version), 0o644); err != nil {
		say("share: %v", err)
		return
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		say("share: %v", err)
		return
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	say("share=%s", strings.Join(names, ","))
}

func envOr(key, fallback string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return fallback
}
