package idle

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// The watch starts with the headers: a request whose answer has not
// begun is not cut, one that falls silent after its headers is, and one
// that finishes is left alone.
func TestWatch(t *testing.T) {
	const idle = 20 * time.Millisecond
	w, r := Watch(httptest.NewRecorder(), httptest.NewRequest("POST", "/v1/chat/completions", nil), idle)
	time.Sleep(3 * idle)
	if r.Context().Err() != nil {
		t.Fatal("cut before the headers were sent")
	}
	w.WriteHeader(http.StatusOK)
	select {
	case <-r.Context().Done():
	case <-time.After(5 * time.Second):
		t.Fatal("a silent answer was not cut")
	}
	w.Stop()

	w, r = Watch(httptest.NewRecorder(), httptest.NewRequest("POST", "/v1/chat/completions", nil), time.Hour)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write([]byte("data: {}\n\n"))
	if r.Context().Err() != nil {
		t.Fatal("an answer that is still talking was cut")
	}
	w.Stop()
}

// A watch's alarm that went off is not handed to the next watch, whose
// request it could otherwise cancel; one that was stopped in time is,
// and a write after Stop leaves it alone.
func TestWatchAlarmReuse(t *testing.T) {
	const short = 5 * time.Millisecond
	w, r := Watch(httptest.NewRecorder(), httptest.NewRequest("POST", "/v1/chat/completions", nil), short)
	wentOff := w.alarm
	w.WriteHeader(http.StatusOK)
	<-r.Context().Done()
	w.Stop()

	for range 100 {
		w2, _ := Watch(httptest.NewRecorder(), httptest.NewRequest("POST", "/v1/chat/completions", nil), time.Hour)
		if w2.alarm == wentOff {
			t.Fatal("an alarm that went off was reused")
		}
		w2.Stop()
	}

	w, _ = Watch(httptest.NewRecorder(), httptest.NewRequest("POST", "/v1/chat/completions", nil), short)
	w.WriteHeader(http.StatusOK)
	w.Stop()
	next, r := Watch(httptest.NewRecorder(), httptest.NewRequest("POST", "/v1/chat/completions", nil), time.Hour)
	next.WriteHeader(http.StatusOK)
	_, _ = w.Write([]byte("late"))
	time.Sleep(4 * short)
	if r.Context().Err() != nil {
		t.Fatal("a write after Stop cut the next watch's request")
	}
	next.Stop()
}

// A watch that ends before its alarm goes off allocates its context,
// its cancel and the request watched, not a timer.
func TestWatchAllocations(t *testing.T) {
	r := httptest.NewRequest("POST", "/v1/chat/completions", nil)
	rec := httptest.NewRecorder()
	var w Writer
	allocs := testing.AllocsPerRun(100, func() {
		w.Start(rec, r, time.Minute)
		w.WriteHeader(http.StatusOK)
		w.Stop()
	})
	if allocs > 3 {
		t.Errorf("a watch allocates %v objects, want at most 3", allocs)
	}
}

// Writes after the headers do not set the timer again, only note their
// time: an answer that keeps talking is not cut when the silence allowed
// has passed since the headers, and one that falls silent is cut no
// sooner than that silence after its last write.
func TestWatchCountsSilenceFromTheLastWrite(t *testing.T) {
	const idle = 500 * time.Millisecond
	w, r := Watch(httptest.NewRecorder(), httptest.NewRequest("POST", "/v1/chat/completions", nil), idle)
	defer w.Stop()
	w.WriteHeader(http.StatusOK)
	var last time.Time
	for end := time.Now().Add(2 * idle); time.Now().Before(end); {
		_, _ = w.Write([]byte("data: {}\n\n"))
		last = time.Now()
		if r.Context().Err() != nil {
			t.Fatal("an answer that is still talking was cut")
		}
		time.Sleep(idle / 25)
	}
	select {
	case <-r.Context().Done():
	case <-time.After(10 * time.Second):
		t.Fatal("an answer silent after its writes was not cut")
	}
	// The write's own time is the one the watch noted, a little before
	// last.
	if silent := time.Since(last); silent < idle-5*time.Millisecond {
		t.Errorf("cut after %v of silence, want at least %v", silent, idle)
	}
}

// An alarm that went off early, found a write since and set itself
// again, is stopped by Stop like any other, and its next watch is cut
// for its own silence only.
func TestWatchAlarmSetAgainIsReusedSafely(t *testing.T) {
	const short = 20 * time.Millisecond
	for range 20 {
		w, r := Watch(httptest.NewRecorder(), httptest.NewRequest("POST", "/v1/chat/completions", nil), short)
		w.WriteHeader(http.StatusOK)
		time.Sleep(short / 2)
		_, _ = w.Write([]byte("x")) // the timer goes off before its silence ends
		time.Sleep(short * 3 / 4)
		w.Stop()
		_ = r

		next, nr := Watch(httptest.NewRecorder(), httptest.NewRequest("POST", "/v1/chat/completions", nil), time.Hour)
		next.WriteHeader(http.StatusOK)
		time.Sleep(2 * short)
		if nr.Context().Err() != nil {
			t.Fatal("a stopped watch's alarm cut the next watch's request")
		}
		next.Stop()
	}
}
