package main

import (
	"bufio"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
)

// memClasses is where a process's memory is at one moment: the kernel's
// resident set, split into anonymous and file pages (the binary's code
// and data), and Go's own classes as runtime.MemStats has them (the
// admin endpoint's heap profile ends with them), in bytes. Read with the
// RSS, it tells what the RSS of idle streams is made of: live objects,
// the free room of spans in use, free pages Go has not handed back yet,
// stacks, the collector's metadata.
type memClasses struct {
	rssAnon, rssFile int64
	stats            map[string]int64 // by the profile's names: "HeapAlloc", "Stack" (in use), …
}

// readMemClasses reads pid's memory classes, Go's from its admin
// endpoint; without one, or when that fails, only the kernel's. With
// collect, Go's are read after a collection it forces: what is live.
func readMemClasses(pid int, admin string, collect bool) memClasses {
	m := memClasses{stats: map[string]int64{}}
	m.rssAnon, m.rssFile = procStatusKiB(pid, "RssAnon:")<<10, procStatusKiB(pid, "RssFile:")<<10
	if admin == "" {
		return m
	}
	client := &http.Client{Timeout: 30 * time.Second}
	url := "http://" + admin + "/debug/pprof/heap?debug=1"
	if collect {
		url += "&gc=1"
	}
	resp, err := client.Get(url)
	if err != nil {
		return m
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		// "# HeapAlloc = 123", "# Stack = 456 / 789" (in use / from the OS)
		name, value, ok := strings.Cut(strings.TrimPrefix(sc.Text(), "# "), " = ")
		if !ok {
			continue
		}
		inUse, _, _ := strings.Cut(value, " / ")
		if v, err := strconv.ParseInt(inUse, 10, 64); err == nil {
			m.stats[name] = v
		}
	}
	return m
}

// procStatusKiB is the field of /proc/pid/status that starts with key,
// in KiB; 0 where there is none.
func procStatusKiB(pid int, key string) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, key); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

// memSplit is what each memory class grew by while a target held its
// idle streams, per stream, in KiB: the split of the RSS the idle phase
// reports; then the heap and stacks after a collection, which tell the
// live objects from the garbage not collected yet. goKnown is false for
// a process without an admin endpoint (only the kernel's classes).
type memSplit struct {
	anon, file                                   float64
	goKnown                                      bool
	heapLive, heapUnused, freeKept, freeReturned float64
	stacks, metadata, other, heapGoal            float64
	collections                                  int64
	liveAfterGC, stacksAfterGC                   float64
}

// splitMemory reads p's memory classes now and what each grew by since
// before, per stream of n. It is called right after the RSS is read, and
// its collection comes after that.
func splitMemory(before memClasses, pid int, admin string, n int) memSplit {
	if n == 0 {
		return memSplit{}
	}
	now := readMemClasses(pid, admin, false)
	per := func(a, b int64) float64 { return float64(b-a) / float64(n) / 1024 }
	stat := func(k string) float64 { return per(before.stats[k], now.stats[k]) }
	m := memSplit{anon: per(before.rssAnon, now.rssAnon), file: per(before.rssFile, now.rssFile)}
	if len(now.stats) == 0 {
		return m
	}
	m.goKnown = true
	m.heapLive, m.heapUnused = stat("HeapAlloc"), stat("HeapInuse")-stat("HeapAlloc")
	m.freeKept, m.freeReturned = stat("HeapIdle")-stat("HeapReleased"), stat("HeapReleased")
	m.stacks = stat("Stack")
	m.metadata = stat("MSpan") + stat("MCache") + stat("GCSys") + stat("BuckHashSys")
	m.other, m.heapGoal = stat("OtherSys"), stat("NextGC")
	m.collections = now.stats["NumGC"] - before.stats["NumGC"]
	collected := readMemClasses(pid, admin, true)
	m.liveAfterGC = per(before.stats["HeapAlloc"], collected.stats["HeapAlloc"])
	m.stacksAfterGC = per(before.stats["Stack"], collected.stats["Stack"])
	return m
}

func (m memSplit) String() string {
	line := fmt.Sprintf("per stream in KiB: RSS anon %+.1f, file %+.1f", m.anon, m.file)
	if m.goKnown {
		line += fmt.Sprintf("; heap live %+.1f, unused in spans %+.1f, free not returned %+.1f, returned %+.1f; "+
			"stacks %+.1f; span, cache and GC metadata %+.1f; other %+.1f; heap goal %+.1f (%d collections)"+
			"; after a collection: heap live %+.1f, stacks %+.1f",
			m.heapLive, m.heapUnused, m.freeKept, m.freeReturned, m.stacks, m.metadata, m.other, m.heapGoal,
			m.collections, m.liveAfterGC, m.stacksAfterGC)
	}
	return line
}
