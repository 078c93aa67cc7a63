package upstream

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// BenchmarkStreamBurst reads a round whose 2,000 events the backend
// writes at once, through the client's own transport with its read
// buffer (readBuffer) and with the transport's default of 4 KiB: what
// the smaller buffer costs where it costs most, a burst of events. It
// reports the process's CPU per event, the backend's work included.
//
//	go test ./translator/upstream -run '^$' -bench StreamBurst
func BenchmarkStreamBurst(b *testing.B) {
	const events = 2000
	const frame = "data: " + `{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"word "}}]}` + "\n\n"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		for range events {
			_, _ = io.WriteString(w, frame)
		}
		_, _ = io.WriteString(w, "data: [DONE]\n\n")
	}))
	defer srv.Close()
	for _, size := range []int{readBuffer, 4 << 10} {
		b.Run("read-buffer-"+strconv.Itoa(size), func(b *testing.B) {
			u, err := New(Config{BaseURL: srv.URL + "/v1", Model: "m"})
			if err != nil {
				b.Fatal(err)
			}
			defer u.Close()
			u.client.Transport.(*http.Transport).ReadBufferSize = size
			req := Request{Messages: NewConversation(Message{Role: "user", Content: "Go on."})}
			before := processCPU(b)
			for b.Loop() {
				readRound(b, u, req)
			}
			b.ReportMetric(float64(processCPU(b)-before)/float64(b.N*events), "cpu-ns/event")
		})
	}
}

func readRound(b *testing.B, u *Client, req Request) {
	st, err := u.Stream(context.Background(), req)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	for {
		if _, err := st.Next(); err == io.EOF {
			return
		} else if err != nil {
			b.Fatal(err)
		}
	}
}

// processCPU is the user and system time the process has used.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
