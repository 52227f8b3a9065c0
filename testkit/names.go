package testkit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
)

// A test may call TestAgent more than once (a table of agents without
// t.Run). go test then names the second suite's subtests baseline#01,
// lost_acknowledgement#01, ...: a replay line must say so, or it reruns the
// first suite's scenario. testNames follows the names go test gives the
// top-level subtests that testkit creates under one test, as go test's own
// matcher does: the k-th subtest named n under a test is n, then n#01,
// n#02, ...

// testNames counts the top-level subtests created under one test.
type testNames struct {
	mu   sync.Mutex
	used map[string]int    // subtest name → subtests created with it so far
	cur  map[string]string // the current suite's subtests: name → go test's name
}

// roots maps a test running a suite to its testNames.
var roots sync.Map // TB → *testNames

// suiteNames starts the names of a new suite under t.
func suiteNames(t TB) *testNames {
	n := &testNames{used: map[string]int{}}
	if t != nil && reflect.TypeOf(t).Comparable() {
		v, loaded := roots.LoadOrStore(t, n)
		n = v.(*testNames)
		if c, ok := t.(interface{ Cleanup(func()) }); ok && !loaded {
			c.Cleanup(func() { roots.Delete(t) })
		}
	}
	n.mu.Lock()
	n.cur = map[string]string{}
	n.mu.Unlock()
	return n
}

// noteSubtest records that testkit creates, or would have created, the
// subtest name under parent, when parent is a test running a suite, and
// returns the name go test gives it: name, name#01, ... A suite whose
// passing scenarios run without subtests (subtests.go) still notes every
// name, so that names are the same whether or not the subtests were made;
// the subtest that is made is created under the returned name, which go
// test keeps as it is.
func noteSubtest(parent TB, name string) string {
	if parent == nil || !reflect.TypeOf(parent).Comparable() {
		return name
	}
	v, ok := roots.Load(parent)
	if !ok {
		return name
	}
	n := v.(*testNames)
	n.mu.Lock()
	defer n.mu.Unlock()
	u := uniqueName(name, n.used[name])
	n.cur[name] = u
	n.used[name]++
	return u
}

// scenario returns the scenario's path with its first element as go test
// names that subtest in this suite: as created, or as it will be when it
// is created next.
func (n *testNames) scenario(sc string) string {
	first, rest, more := strings.Cut(sc, "/")
	n.mu.Lock()
	name, ok := n.cur[first]
	if !ok {
		name = uniqueName(first, n.used[first])
	}
	n.mu.Unlock()
	if name == first { // the first suite of a test
		return sc
	}
	if more {
		return name + "/" + rest
	}
	return name
}

func uniqueName(name string, k int) string {
	if k == 0 {
		return name
	}
	return fmt.Sprintf("%s#%02d", name, k)
}

// written holds the report files this process wrote, so that a second
// suite of one test gets a file of its own instead of overwriting the
// first one's.
var written struct {
	sync.Mutex
	paths map[string]bool
	next  map[string]int // per dir and base, the number to try first
}

func numberedReport(base string, k int) string { return fmt.Sprintf("%s_%02d.json", base, k) }

// fileBase is test with each run of bytes other than A-Z, a-z, 0-9, '.',
// '_' and '-' written as one '_' (a subtest's slashes, a space), as the
// regular expression [^A-Za-z0-9._-]+ replaced did (a rune outside the set
// is bytes outside it): 70 ns for a subtest's name, against 0.8 µs and 4
// allocations through the regular expression (5 ns for a top-level test's,
// with nothing to replace).
func fileBase(test string) string {
	i := 0
	for i < len(test) && fileByte(test[i]) {
		i++
	}
	if i == len(test) {
		return test
	}
	b := make([]byte, i, len(test))
	copy(b, test)
	for i < len(test) {
		if fileByte(test[i]) {
			b = append(b, test[i])
			i++
			continue
		}
		b = append(b, '_')
		for i < len(test) && !fileByte(test[i]) {
			i++
		}
	}
	return string(b)
}

func fileByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-'
}

// reportFileName is the file name of a test's report in dir: <Test>.json,
// or <Test>_02.json, <Test>_03.json, ... for the later suites of a test
// that runs several (and for any name this process already wrote). A file
// left by an earlier go test run is replaced, as before.
func reportFileName(dir, test string) string {
	base := fileBase(test)
	written.Lock()
	defer written.Unlock()
	if written.paths == nil {
		written.paths, written.next = map[string]bool{}, map[string]int{}
	}
	// The numbers tried before are taken: a test that runs a thousand
	// suites (go test -count 1000) looks at one name each, not at all the
	// ones before it.
	key := filepath.Join(dir, base)
	name := base + ".json"
	if written.paths[filepath.Join(dir, name)] {
		k := max(written.next[key], 2)
		for written.paths[filepath.Join(dir, numberedReport(base, k))] {
			k++
		}
		name = numberedReport(base, k)
		written.next[key] = k + 1
	}
	written.paths[filepath.Join(dir, name)] = true
	return name
}

// removeStaleNumbered removes, once path (the test's first report of this
// process, <Test>.json) is written, the numbered reports of the same test
// an earlier go test run left in dir (<Test>_02.json, ... from -count=3 or
// a test that ran several suites then): left there, a later run that
// rewrote only <Test>.json kept the earlier run's verdicts beside it, and
// agentidem-gen report dir/ listed a fixed agent as UNSAFE twice (red team
// rtV #19). A numbered file this process wrote is its own; one whose
// report names another test (a test called TestX_02) is that test's.
func removeStaleNumbered(dir, path, test string) {
	base := fileBase(test)
	if filepath.Base(path) != base+".json" {
		return
	}
	prefix := base + "_"
	for _, name := range numberedIn(dir)[base] {
		digits, ok := strings.CutPrefix(name, prefix)
		if !ok {
			continue
		}
		digits = strings.TrimSuffix(digits, ".json")
		if len(digits) < 2 || strings.Trim(digits, "0123456789") != "" { // numberedReport writes two digits or more
			continue
		}
		m := filepath.Join(dir, name)
		written.Lock()
		mine := written.paths[m]
		written.Unlock()
		if mine || reportTest(m) != test {
			continue
		}
		os.Remove(m)
	}
}

// numberedIn lists the numbered reports (<Test>_<digits>.json) that were
// in dir when this process first wrote a report there, by the name before
// their last "_" (the <Test> part that fileBase made of a test's name).
// Those are the only ones an earlier go test run can have left: a numbered
// file made since is this process's own. Reading the directory for each
// test instead cost a glob of the whole directory per report: with the
// 1,200 reports of scripts/bench/suite.sh's directory, 0.3 ms of each
// suite (the ten-write suite's whole report took 0.5 ms), and 1.8 ms of
// the naive refund's (TestMeasureSuite, GOMAXPROCS=1). Listed in one
// slice, they were all compared with each report's name, 1,200 prefixes
// a report there: 8 to 13 µs a report, against 0.3 to 0.5 µs for a map
// look-up by the name (removeStaleNumbered of the ten-write suite's file
// among those 1,200 names, GOMAXPROCS=1, tenth sitting).
func numberedIn(dir string) map[string][]string {
	stale.Lock()
	defer stale.Unlock()
	if names, ok := stale.dirs[dir]; ok {
		return names
	}
	if stale.dirs == nil {
		stale.dirs = map[string]map[string][]string{}
	}
	names := map[string][]string{}
	if f, err := os.Open(dir); err == nil {
		all, _ := f.Readdirnames(-1)
		f.Close()
		for _, n := range all {
			// The least a numbered report's name holds: "_", a digit,
			// ".json"; removeStaleNumbered checks the rest.
			if i := strings.LastIndexByte(n, '_'); i >= 0 && strings.HasSuffix(n, ".json") && i+1 < len(n)-len(".json") {
				names[n[:i]] = append(names[n[:i]], n)
			}
		}
	}
	stale.dirs[dir] = names
	return names
}

// stale holds, per directory, what numberedIn read there.
var stale struct {
	sync.Mutex
	dirs map[string]map[string][]string
}

// reportTest is the name of the test whose report file path is, or "".
// In a report WriteJSON wrote, the report's own "name" is the one member
// on a line that starts with two spaces (a JSON string holds no line
// break, and deeper members are indented more): it is found there, and
// only in another file is the whole JSON decoded. Decoding the whole
// ten-write report to read its name took 2 ms (a numbered report of an
// earlier run, TestMeasureSuite's naive refund: 2,581 µs a suite under
// testkit against 252 without the file).
func reportTest(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	const member = "\n  \"name\": "
	if i := bytes.Index(b, []byte(member)); i >= 0 {
		var name string
		if json.NewDecoder(bytes.NewReader(b[i+len(member):])).Decode(&name) == nil {
			return name
		}
	}
	var rep struct {
		Name string `json:"name"`
	}
	if json.NewDecoder(bytes.NewReader(b)).Decode(&rep) != nil {
		return ""
	}
	return rep.Name
}
