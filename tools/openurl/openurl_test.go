package openurl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/switchyardhq/switchyard/tools"
	"github.com/switchyardhq/switchyard/tools/toolstest"
	"github.com/switchyardhq/switchyard/translator/wire"
)

// countingListener counts the connections it accepts, to prove that a
// refused call never reached it.
type countingListener struct {
	net.Listener
	accepted atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.accepted.Add(1)
	}
	return c, err
}

// listen serves h on addr ("127.0.0.1:0") and counts connections. It
// skips the test when addr cannot be bound (no IPv6 on the machine).
func listen(t *testing.T, addr string, h http.Handler) (*httptest.Server, *countingListener) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("cannot listen on %s: %v", addr, err)
	}
	cl := &countingListener{Listener: ln}
	srv := httptest.NewUnstartedServer(h)
	srv.Listener = cl
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, cl
}

func port(srv *httptest.Server) string {
	_, p, _ := net.SplitHostPort(srv.Listener.Addr().String())
	return p
}

func call(u string, env *tools.Env) tools.Call {
	args, _ := json.Marshal(map[string]string{"url": u})
	if env == nil {
		env = &tools.Env{}
	}
	return tools.Call{ID: "c1", Name: tools.NameOpenURL, Arguments: args, Env: env}
}

// loopbackResolver resolves every name to 127.0.0.1 and ::1, the way a
// hostile DNS server or a lenient C resolver would, and counts lookups.
type loopbackResolver struct{ lookups atomic.Int64 }

func (r *loopbackResolver) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	r.lookups.Add(1)
	return []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("::1")}, nil
}

func wantCallError(t *testing.T, err error, want string) {
	t.Helper()
	var ce *tools.CallError
	if !errors.As(err, &ce) {
		t.Fatalf("error = %v (%T), want a *tools.CallError containing %q", err, err, want)
	}
	if !strings.Contains(ce.Message, want) {
		t.Fatalf("message = %q, want it to contain %q", ce.Message, want)
	}
}

// wantRefusal is wantCallError for a refusal of the address checks, whose
// message starts with "refused: ".
func wantRefusal(t *testing.T, err error, want string) {
	t.Helper()
	wantCallError(t, err, want)
	var ce *tools.CallError
	errors.As(err, &ce)
	if !strings.HasPrefix(ce.Message, "refused: ") {
		t.Errorf("message %q does not start with \"refused: \"", ce.Message)
	}
}

var okHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain")
	fmt.Fprintln(w, "internal secret")
})

func TestExecuteRefusesInternalAddresses(t *testing.T) {
	v4, v4ln := listen(t, "127.0.0.1:0", okHandler)
	p := port(v4)
	var v6ln *countingListener
	p6 := "1"
	if ln, err := net.Listen("tcp", "[::1]:0"); err == nil {
		ln.Close()
		var v6 *httptest.Server
		v6, v6ln = listen(t, "[::1]:0", okHandler)
		p6 = port(v6)
	}
	resolver := &loopbackResolver{}
	tool := New(Options{Resolver: resolver})

	tests := []struct {
		name string
		url  string
		want string
	}{
		{name: "loopback", url: "http://127.0.0.1:" + p + "/", want: "127.0.0.1 is loopback"},
		{name: "v6 loopback", url: "http://[::1]:" + p6 + "/", want: "::1 is loopback"},
		{name: "10/8", url: "http://10.0.0.1/", want: "private network"},
		{name: "172.16/12", url: "http://172.16.0.1/", want: "private network"},
		{name: "192.168/16", url: "http://192.168.1.1/", want: "private network"},
		{name: "metadata", url: "http://169.254.169.254/latest/meta-data/", want: "cloud metadata"},
		{name: "v6 metadata", url: "http://[fd00:ec2::254]/", want: "cloud metadata"},
		{name: "unique local", url: "http://[fd00::1]/", want: "private network"},
		{name: "unspecified reaches this host on Linux", url: "http://0.0.0.0:" + p + "/", want: "unspecified"},
		{name: "decimal", url: "http://2130706433:" + p + "/", want: "not a standard IP address"},
		{name: "octal", url: "http://0177.0.0.1:" + p + "/", want: "not a standard IP address"},
		{name: "hex", url: "http://0x7f.0.0.1:" + p + "/", want: "not a standard IP address"},
		{name: "hex whole", url: "http://0x7f000001:" + p + "/", want: "not a standard IP address"},
		{name: "short form", url: "http://127.1:" + p + "/", want: "not a standard IP address"},
		{name: "mapped", url: "http://[::ffff:127.0.0.1]:" + p + "/", want: "127.0.0.1 is loopback"},
		{name: "mapped hex", url: "http://[::ffff:7f00:1]:" + p + "/", want: "127.0.0.1 is loopback"},
		{name: "NAT64", url: "http://[64:ff9b::7f00:1]:" + p + "/", want: "NAT64"},
		{name: "name resolving to loopback", url: "http://intranet.test:" + p + "/", want: "is loopback"},
		{name: "localhost", url: "http://localhost:" + p + "/", want: "is loopback"},
		{name: "localhost with trailing dot", url: "http://LOCALHOST.:" + p + "/", want: "is loopback"},
		{name: "link-local with zone", url: "http://[fe80::1%25lo]:" + p + "/", want: "link-local"},
		{name: "userinfo", url: "http://user:pass@127.0.0.1:" + p + "/", want: "user name or password"},
		{name: "user only", url: "https://user@example.com/", want: "user name or password"},
		{name: "file", url: "file:///etc/passwd", want: "only http and https"},
		{name: "gopher", url: "gopher://127.0.0.1:" + p + "/", want: "only http and https"},
		{name: "relative", url: "/etc/passwd", want: "must be absolute"},
		{name: "empty", url: "", want: "empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tool.Execute(context.Background(), call(tt.url, nil))
			wantRefusal(t, err, tt.want)
		})
	}
	if n := v4ln.accepted.Load(); n != 0 {
		t.Errorf("the 127.0.0.1 listener accepted %d connections, want 0", n)
	}
	if v6ln != nil && v6ln.accepted.Load() != 0 {
		t.Errorf("the ::1 listener accepted %d connections, want 0", v6ln.accepted.Load())
	}
	if resolver.lookups.Load() == 0 {
		t.Error("the resolver was never asked: the name cases did not test resolution")
	}
}

func TestExecuteRefusesRedirectToInternal(t *testing.T) {
	// The internal service sits on 127.0.0.2, outside the allow-list.
	_, internal := listen(t, "127.0.0.2:0", okHandler)
	ip := internal.Addr().String()
	_, ipPort, _ := net.SplitHostPort(ip)

	var secretHits atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("/go", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
	})
	mux.HandleFunc("/secret", func(w http.ResponseWriter, r *http.Request) {
		secretHits.Add(1)
		okHandler(w, r)
	})
	front, _ := listen(t, "127.0.0.1:0", mux)

	resolver := ResolverFunc(func(ctx context.Context, network, host string) ([]netip.Addr, error) {
		return []netip.Addr{netip.MustParseAddr("127.0.0.2")}, nil
	})
	tool := New(Options{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}, Resolver: resolver})

	tests := []struct {
		name string
		to   string
		want string
	}{
		{name: "literal internal address", to: "http://" + ip + "/", want: "127.0.0.2 is loopback"},
		{name: "name resolving to internal address", to: "http://internal.test:" + ipPort + "/", want: "127.0.0.2 is loopback"},
		{name: "unspecified address", to: "http://0.0.0.0:" + port(front) + "/secret", want: "unspecified"},
		{name: "private network", to: "http://10.0.0.1/", want: "private network"},
		{name: "metadata", to: "http://169.254.169.254/latest/meta-data/", want: "cloud metadata"},
		{name: "userinfo", to: "http://u:p@127.0.0.1:" + port(front) + "/secret", want: "user name or password"},
		{name: "other scheme", to: "ftp://127.0.0.1:" + port(front) + "/secret", want: "only http and https"},
		{name: "octal", to: "http://0177.0.0.2:" + ipPort + "/", want: "not a standard IP address"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := front.URL + "/go?to=" + tt.to
			_, err := tool.Execute(context.Background(), call(u, nil))
			wantCallError(t, err, tt.want)
		})
	}
	if n := internal.accepted.Load(); n != 0 {
		t.Errorf("the internal listener accepted %d connections, want 0", n)
	}
	if n := secretHits.Load(); n != 0 {
		t.Errorf("/secret was requested %d times, want 0", n)
	}
}

func allowLoopback() []netip.Prefix {
	return []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
}

func TestExecuteArticle(t *testing.T) {
	article := toolstest.Testdata(t, "article.html")
	srv, _ := listen(t, "127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(article)
	}))
	tool := New(Options{Allow: allowLoopback()})
	res, err := tool.Execute(context.Background(), call(srv.URL+"/news/rail#top", nil))
	if err != nil {
		t.Fatal(err)
	}
	const title = "Rail Freight Capacity in 2026"
	wantHead := "# " + title + "\n\nSource: " + srv.URL + "/news/rail\n\n"
	if !strings.HasPrefix(res.Content, wantHead) {
		t.Errorf("content starts %q, want %q", firstLines(res.Content, 3), wantHead)
	}
	for _, want := range []string{
		"## What changed on the corridors",
		"## How shippers should plan",
		"- Digital signalling on the Rhine–Alpine corridor",
		"1. Ask your operator",
		"[the reference implementation](https://example.org/ref)",
		"None of this removes the bottlenecks",
	} {
		if !strings.Contains(res.Content, want) {
			t.Errorf("content lacks %q:\n%s", want, res.Content)
		}
	}
	for _, boilerplate := range []string{
		"All rights reserved", "Privacy policy", "Subscribe today", "Advertise with us",
		"Ten port cranes", "analytics", "data:image", "font-family",
	} {
		if strings.Contains(res.Content, boilerplate) {
			t.Errorf("content keeps boilerplate %q:\n%s", boilerplate, res.Content)
		}
	}
	if len(res.Sources) != 1 || res.Sources[0].URL != srv.URL+"/news/rail" || res.Sources[0].Title != title {
		t.Errorf("sources = %+v", res.Sources)
	}
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n")
}

func TestExecuteTextAndCharsets(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/notes.txt", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprint(w, "Line one\n\n\n\n\nLine two über\n")
	})
	mux.HandleFunc("/latin1", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=windows-1252")
		w.Write([]byte("<html><head><title>Caf\xe9</title></head><body><p>Cr\xe8me br\xfbl\xe9e</p></body></html>"))
	})
	mux.HandleFunc("/untyped", func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Content-Type"] = nil // no header: the body is sniffed
		fmt.Fprint(w, "<!DOCTYPE html><html><head><title>Sniffed</title></head><body><p>Found by sniffing.</p></body></html>")
	})
	srv, _ := listen(t, "127.0.0.1:0", mux)
	tool := New(Options{Allow: allowLoopback()})

	tests := []struct {
		name string
		path string
		want []string
	}{
		{name: "plain text", path: "/notes.txt", want: []string{"# notes.txt\n", "Line one\n\nLine two über"}},
		{name: "windows-1252", path: "/latin1", want: []string{"# Café\n", "Crème brûlée"}},
		{name: "no content type", path: "/untyped", want: []string{"# Sniffed\n", "Found by sniffing."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := tool.Execute(context.Background(), call(srv.URL+tt.path, nil))
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(res.Content, w) {
					t.Errorf("content lacks %q:\n%s", w, res.Content)
				}
			}
		})
	}
}

func TestExecuteBounds(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/big.txt", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		for range 1000 {
			fmt.Fprintln(w, "0123456789")
		}
	})
	mux.HandleFunc("/accents.txt", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprint(w, strings.Repeat("é", 500))
	})
	srv, _ := listen(t, "127.0.0.1:0", mux)

	t.Run("body cut at MaxBytes", func(t *testing.T) {
		tool := New(Options{Allow: allowLoopback(), MaxBytes: 2048})
		res, err := tool.Execute(context.Background(), call(srv.URL+"/big.txt", nil))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(res.Content, "only the first 2 KiB of the page were read") {
			t.Errorf("no note of the cut:\n%s", res.Content)
		}
		if n := strings.Count(res.Content, "0123456789"); n == 0 || n > 2048/11+1 {
			t.Errorf("content holds %d lines of the body, want at most %d", n, 2048/11+1)
		}
	})
	t.Run("text cut at MaxChars on a rune boundary", func(t *testing.T) {
		tool := New(Options{Allow: allowLoopback(), MaxChars: 100})
		res, err := tool.Execute(context.Background(), call(srv.URL+"/accents.txt", nil))
		if err != nil {
			t.Fatal(err)
		}
		if !utf8.ValidString(res.Content) {
			t.Error("content is not valid UTF-8")
		}
		if n := strings.Count(res.Content, "é"); n != 100 {
			t.Errorf("content keeps %d characters of the page, want 100", n)
		}
		if !strings.Contains(res.Content, "the text was cut after 100 characters") {
			t.Errorf("no note of the cut:\n%s", res.Content)
		}
	})
}

func TestExecuteRedirects(t *testing.T) {
	var loopRequests atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("/loop/{n}", func(w http.ResponseWriter, r *http.Request) {
		loopRequests.Add(1)
		var n int
		fmt.Sscan(r.PathValue("n"), &n)
		http.Redirect(w, r, fmt.Sprintf("/loop/%d", n+1), http.StatusFound)
	})
	mux.HandleFunc("/hop/{n}", func(w http.ResponseWriter, r *http.Request) {
		var n int
		fmt.Sscan(r.PathValue("n"), &n)
		if n > 0 {
			http.Redirect(w, r, fmt.Sprintf("/hop/%d", n-1), http.StatusMovedPermanently)
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, "arrived")
	})
	srv, _ := listen(t, "127.0.0.1:0", mux)
	tool := New(Options{Allow: allowLoopback()})

	t.Run("five redirects are followed", func(t *testing.T) {
		res, err := tool.Execute(context.Background(), call(srv.URL+"/hop/5", nil))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(res.Content, "Source: "+srv.URL+"/hop/0\n") || !strings.Contains(res.Content, "arrived") {
			t.Errorf("content:\n%s", res.Content)
		}
		if res.Sources[0].URL != srv.URL+"/hop/0" {
			t.Errorf("source = %s, want the final URL", res.Sources[0].URL)
		}
	})
	t.Run("the sixth is refused", func(t *testing.T) {
		_, err := tool.Execute(context.Background(), call(srv.URL+"/loop/0", nil))
		wantCallError(t, err, "too many redirects (more than 5)")
		if n := loopRequests.Load(); n != 6 {
			t.Errorf("%d requests made, want 6 (the first and five redirects)", n)
		}
	})
}

func TestExecuteFailures(t *testing.T) {
	release := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("/report.pdf", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/pdf")
		w.Write([]byte("%PDF-1.7\n"))
	})
	mux.HandleFunc("/image", func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Content-Type"] = nil
		w.Write([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"))
	})
	mux.HandleFunc("/missing", http.NotFound)
	mux.HandleFunc("/empty", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<html><body>  </body></html>")
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	srv, _ := listen(t, "127.0.0.1:0", mux)
	t.Cleanup(func() { close(release) })
	tool := New(Options{Allow: allowLoopback(), Timeout: 200 * time.Millisecond})

	tests := []struct {
		name string
		url  string
		want string
	}{
		{name: "pdf", url: srv.URL + "/report.pdf", want: "the page is not HTML or text (application/pdf)"},
		{name: "sniffed image", url: srv.URL + "/image", want: "the page is not HTML or text (image/png)"},
		{name: "404", url: srv.URL + "/missing", want: "HTTP 404 from the site"},
		{name: "no text", url: srv.URL + "/empty", want: "the page has no readable text"},
		{name: "timeout", url: srv.URL + "/slow", want: "the page did not answer in time"},
		{name: "nothing listening", url: "http://127.0.0.1:1/", want: "could not connect to the site"},
		{name: "control character", url: "http://exa\x00mple.com/", want: "not a valid URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tool.Execute(context.Background(), call(tt.url, nil))
			wantCallError(t, err, tt.want)
		})
	}

	t.Run("arguments not JSON", func(t *testing.T) {
		_, err := tool.Execute(context.Background(), tools.Call{Arguments: json.RawMessage(`{"url":`), Env: &tools.Env{}})
		wantCallError(t, err, `arguments must be a JSON object {"url": string}`)
	})
	t.Run("caller cancels", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := tool.Execute(ctx, call(srv.URL+"/slow", nil))
		var ce *tools.CallError
		if !errors.Is(err, context.Canceled) || errors.As(err, &ce) {
			t.Errorf("error = %v, want the caller's context.Canceled, not a message for the model", err)
		}
	})
}

func TestExecuteSearchOff(t *testing.T) {
	var hits sync.Map
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		n, _ := hits.LoadOrStore(r.URL.Path, new(atomic.Int64))
		n.(*atomic.Int64).Add(1)
		if r.URL.Path == "/moved" {
			http.Redirect(w, r, "/landing", http.StatusFound)
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, "page ", r.URL.Path)
	})
	srv, _ := listen(t, "127.0.0.1:0", mux)
	hitCount := func(path string) int64 {
		if n, ok := hits.Load(path); ok {
			return n.(*atomic.Int64).Load()
		}
		return 0
	}
	tool := New(Options{Allow: allowLoopback()})
	env := &tools.Env{SearchOff: true, Links: []string{srv.URL + "/given", srv.URL + "/moved"}}

	tests := []struct {
		name string
		url  string
		want string // "" means the page opens
	}{
		{name: "the user's link", url: srv.URL + "/given"},
		{name: "the user's link spelled differently", url: strings.Replace(srv.URL, "http://", "HTTP://", 1) + "/given#part"},
		{name: "a user link that redirects", url: srv.URL + "/moved"},
		{name: "another page", url: srv.URL + "/other", want: "web search is off"},
		{name: "the user's link with another query", url: srv.URL + "/given?x=1", want: "web search is off"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := tool.Execute(context.Background(), call(tt.url, env))
			if tt.want != "" {
				wantCallError(t, err, tt.want)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(res.Content, "page /") {
				t.Errorf("content:\n%s", res.Content)
			}
		})
	}
	if hitCount("/other") != 0 {
		t.Error("a page the user did not give was requested")
	}
	if hitCount("/landing") != 1 {
		t.Errorf("/landing requested %d times, want 1 (through the user's redirecting link)", hitCount("/landing"))
	}

	t.Run("search on: any page", func(t *testing.T) {
		if _, err := tool.Execute(context.Background(), call(srv.URL+"/other", &tools.Env{Links: env.Links})); err != nil {
			t.Fatal(err)
		}
	})
}

func TestExecuteProgress(t *testing.T) {
	long := strings.Repeat("word ", 10000) // 50,000 characters
	mux := http.NewServeMux()
	mux.HandleFunc("/long.txt", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, long)
	})
	srv, _ := listen(t, "127.0.0.1:0", mux)
	tool := New(Options{Allow: allowLoopback()})

	t.Run("success", func(t *testing.T) {
		sink := &toolstest.Progress{}
		c := call(srv.URL+"/long.txt", nil)
		c.Progress = sink
		if _, err := tool.Execute(context.Background(), c); err != nil {
			t.Fatal(err)
		}
		if got, want := sink.Statuses(), "fetch:active fetch:done extract:active extract:done"; got != want {
			t.Errorf("steps = %q, want %q", got, want)
		}
		if len(sink.Data) != 1 || sink.Data[0].SID != "extract" {
			t.Fatalf("step data = %+v", sink.Data)
		}
		if n := utf8.RuneCountInString(sink.Data[0].Content); n != wire.MaxStepDataChars {
			t.Errorf("step data holds %d characters, want %d", n, wire.MaxStepDataChars)
		}
	})
	t.Run("failure", func(t *testing.T) {
		sink := &toolstest.Progress{}
		c := call(srv.URL+"/missing", nil)
		c.Progress = sink
		if _, err := tool.Execute(context.Background(), c); err == nil {
			t.Fatal("no error")
		}
		if got, want := sink.Statuses(), "fetch:active fetch:error"; got != want {
			t.Errorf("steps = %q, want %q", got, want)
		}
		if d := sink.Steps[len(sink.Steps)-1].Detail; d != "HTTP 404 from the site" {
			t.Errorf("detail = %q", d)
		}
	})
}

func TestLabel(t *testing.T) {
	tool := New(Options{})
	tests := []struct {
		name string
		args string
		want string
	}{
		{name: "host", args: `{"url":"https://www.example.com/a/b?c=d"}`, want: "Reading www.example.com"},
		{name: "port dropped", args: `{"url":"http://example.com:8080/"}`, want: "Reading example.com"},
		{name: "no host", args: `{"url":"/relative"}`},
		{name: "invalid", args: `{"url":`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tool.Label(json.RawMessage(tt.args)); got != tt.want {
				t.Errorf("Label(%s) = %q, want %q", tt.args, got, tt.want)
			}
		})
	}
}

func TestTransportUsesNoProxy(t *testing.T) {
	tr := New(Options{}).fetcher.client.Transport.(*http.Transport)
	if tr.Proxy != nil {
		t.Error("the transport takes a proxy, which would connect out of the guard's sight")
	}
}

// FuzzExecute checks the whole path, URL check to dial, against the
// reference ranges: whatever the URL and whatever the name resolves to,
// no blocked address is ever dialled, and every failure is a message
// for the model.
func FuzzExecute(f *testing.F) {
	for _, s := range []string{
		"http://127.0.0.1/", "http://2130706433/", "http://0x7f.0.0.1/", "http://[::ffff:127.0.0.1]/",
		"http://example.com:8080/", "https://example.com/", "http://[fe80::1%25eth0]/",
		"http://a.test./", "http://u:p@example.com/", "HTTPS://EXAMPLE.COM:443/x#y",
	} {
		f.Add(s, []byte{127, 0, 0, 1})
		f.Add(s, []byte{93, 184, 215, 14})
	}
	f.Add("http://host.test/", netip.MustParseAddr("64:ff9b::a00:1").AsSlice())
	f.Fuzz(func(t *testing.T, rawURL string, resolved []byte) {
		var mu sync.Mutex
		var dialled []string
		tool := New(Options{
			Timeout: time.Second,
			Resolver: ResolverFunc(func(ctx context.Context, network, host string) ([]netip.Addr, error) {
				if a, ok := netip.AddrFromSlice(resolved); ok {
					return []netip.Addr{a}, nil
				}
				return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
			}),
		})
		tool.fetcher.dial = func(ctx context.Context, network, address string) (net.Conn, error) {
			mu.Lock()
			defer mu.Unlock()
			dialled = append(dialled, address)
			return nil, errors.New("no network while fuzzing")
		}
		_, err := tool.Execute(context.Background(), call(rawURL, nil))
		var ce *tools.CallError
		if !errors.As(err, &ce) {
			t.Fatalf("Execute(%q) = %v, want a *tools.CallError", rawURL, err)
		}
		mu.Lock()
		defer mu.Unlock()
		for _, a := range dialled {
			ap, perr := netip.ParseAddrPort(a)
			if perr != nil {
				t.Fatalf("dialled %q, not an address", a)
			}
			if refBlocked(ap.Addr(), referenceBlocked) || refBlocked(ap.Addr(), referenceNever) {
				t.Fatalf("Execute(%q) dialled blocked address %s", rawURL, a)
			}
			if ap.Port() != 80 && ap.Port() != 443 {
				t.Fatalf("Execute(%q) dialled port %d", rawURL, ap.Port())
			}
		}
	})
}

func BenchmarkExtract(b *testing.B) {
	body := toolstest.Testdata(b, "article.html")
	u, _ := url.Parse("http://news.example/rail")
	p := page{url: u, mediaType: "text/html", contentType: "text/html; charset=utf-8", body: body}
	conv := newConverter()
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, err := extract(context.Background(), conv, p); err != nil {
			b.Fatal(err)
		}
	}
}

// TestDialerControlRefuses proves the last line of defence on its own:
// the socket-level check refuses a loopback address even when handed
// one directly, past the lookup-time check.
func TestDialerControlRefuses(t *testing.T) {
	srv, ln := listen(t, "127.0.0.1:0", okHandler)
	tool := New(Options{})
	conn, err := tool.fetcher.dial(context.Background(), "tcp", "127.0.0.1:"+port(srv))
	if conn != nil {
		conn.Close()
	}
	wantCallError(t, err, "127.0.0.1 is loopback")
	if n := ln.accepted.Load(); n != 0 {
		t.Errorf("the listener accepted %d connections, want 0", n)
	}
}
