package e2e

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/switchyardhq/switchyard/internal/demobackend"
	"github.com/switchyardhq/switchyard/internal/testupstream"
	"github.com/switchyardhq/switchyard/policy"
)

// TestConcurrentRequestsCannotOverspend sends 50 requests at once from an
// account holding 5 cents, each answer costing 1 cent: reservations let
// through no more than the balance pays for, on one node with the
// in-process limiter and on two nodes sharing PostgreSQL and Redis.
func TestConcurrentRequestsCannotOverspend(t *testing.T) {
	for _, tc := range []struct {
		name  string
		env   func(t *testing.T, upstream string) env
		nodes int
	}{
		{name: "sqlite", env: embeddedEnv, nodes: 1},
		{name: "postgres and redis", env: distributedEnv, nodes: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up := testupstream.Start(t, demobackend.Options{TimeToFirstToken: 20 * time.Millisecond})
			usage := demobackend.Usage{PromptTokens: 1000, CompletionTokens: 200, TotalTokens: 1200}
			const answerCents = 1
			if p := policy.ProfileFor(policy.RevisionB).Price(int64(usage.PromptTokens), int64(usage.CompletionTokens)); p != answerCents {
				t.Fatalf("the scripted answer costs %d cents, want %d", p, answerCents)
			}
			up.Match(func(*demobackend.Request) bool { return true }, demobackend.Reply{Content: "Fine.", Usage: &usage})

			e := tc.env(t, up.URL())
			key := newKey(t, e, "thrifty")
			const balance = 5
			st := openStore(t, e)
			ctx := context.Background()
			acct := accountNamed(t, st, "thrifty")
			credit(t, st, acct.ID, balance, "five-cents")
			var nodes []*gateway
			cfg := switchyardConfig(t, "limits {\n\t\t\t"+loadedRedis+"\n\t\t}")
			for range tc.nodes {
				nodes = append(nodes, startGateway(t, e, cfg))
			}

			const n = 50
			statuses := make([]int, n)
			bodies := make([]string, n)
			var wg sync.WaitGroup
			for i := range n {
				// Half name max_tokens (a hold of 1 cent), half do not (the
				// default hold of 4,096 tokens, 4 cents).
				body := chatBody
				if i%2 == 0 {
					body = fmt.Sprintf(`{"model":"m","max_tokens":100,"messages":[{"role":"user","content":"hi %d"}]}`, i)
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					statuses[i], _, bodies[i] = nodes[i%len(nodes)].do("POST", "/v1/chat/completions", key, body)
				}()
			}
			wg.Wait()

			admitted := 0
			for i, status := range statuses {
				switch status {
				case http.StatusOK:
					admitted++
				case http.StatusPaymentRequired:
					if _, typ, code := errorBody(t, bodies[i]); code != "insufficient_balance" || typ != "insufficient_quota" {
						t.Errorf("request %d refused with %q %q", i, typ, code)
					}
				default:
					t.Errorf("request %d: %d %s", i, status, bodies[i])
				}
			}
			t.Logf("%d of %d requests admitted", admitted, n)
			if admitted == 0 || admitted > balance/answerCents {
				t.Fatalf("%d of %d requests admitted on a balance of %d cents at %d cent each", admitted, n, balance, answerCents)
			}
			if got := len(up.ChatRequests()); got != admitted {
				t.Errorf("%d requests reached the upstream, %d were admitted", got, admitted)
			}

			// Every admitted request was charged; no refused one was.
			charged := charges(t, e, "thrifty")
			var spent int64
			for _, c := range charged {
				spent -= c.AmountCents
			}
			if len(charged) != admitted || spent != int64(admitted*answerCents) {
				t.Fatalf("%d charges totalling %d cents for %d admitted requests", len(charged), spent, admitted)
			}
			book := readLedger(t, st, acct.ID)
			final := book.balance
			if final < 0 || final != balance-spent {
				t.Fatalf("final balance %d cents after spending %d of %d", final, spent, balance)
			}
			if !book.consistent() {
				t.Fatalf("the ledger sums to %d and ends at %d; the balance is %d", book.sum, book.last, final)
			}

			// What is left is spent to the last cent, one request at a time,
			// and then refused. Each request's hold stays until its charge
			// is committed, a few milliseconds after its answer: with the
			// balance this low, the next request waits for that.
			for range final {
				settleLedgers(t)
				if status, _, body := nodes[0].do("POST", "/v1/chat/completions", key, chatBody); status != http.StatusOK {
					t.Fatalf("with %d cents left: %d %s", final, status, body)
				}
			}
			if status, _, body := nodes[len(nodes)-1].do("POST", "/v1/chat/completions", key, chatBody); status != http.StatusPaymentRequired {
				t.Fatalf("with the balance spent: %d %s", status, body)
			}
			settleLedgers(t)
			if after, _ := st.Balance(ctx, acct.ID); after != 0 {
				t.Fatalf("balance %d cents after spending the rest, want 0", after)
			}
		})
	}
}

// TestHoldOfAClientGoneIsReleased: a stream whose client leaves ends in a
// panic inside the proxy; its hold is still settled, so the account's
// balance is usable again at once.
func TestHoldOfAClientGoneIsReleased(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  func(t *testing.T, upstream string) env
	}{
		{name: "sqlite", env: embeddedEnv},
		{name: "postgres and redis", env: distributedEnv},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := tc.env(t, slowUpstream(t).URL())
			key := newKey(t, e, "leaver")
			st := openStore(t, e)
			ctx := context.Background()
			acct := accountNamed(t, st, "leaver")
			// A stream without max_tokens holds 4 cents: all there is.
			credit(t, st, acct.ID, 4, "four-cents")
			g := startGateway(t, e, switchyardConfig(t, "limits {\n\t\t\t"+loadedRedis+"\n\t\t}"))
			const small = `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"hi"}]}`

			status, body, leave := openStream(t, g, key)
			if status != http.StatusOK {
				t.Fatalf("stream: %d %s", status, body)
			}
			if status, _, body := g.do("POST", "/v1/chat/completions", key, small); status != http.StatusPaymentRequired {
				t.Fatalf("while the stream holds the balance: %d %s", status, body)
			}
			leave()
			deadline := time.Now().Add(10 * time.Second)
			for {
				status, _, body := g.do("POST", "/v1/chat/completions", key, small)
				if status == http.StatusOK {
					break
				}
				if status != http.StatusPaymentRequired || time.Now().After(deadline) {
					t.Fatalf("after the client left: %d %s", status, body)
				}
				time.Sleep(20 * time.Millisecond)
			}
			if got := charges(t, e, "leaver"); len(got) != 2 {
				t.Fatalf("%d charges, want the stream's and the small request's", len(got))
			}
			if final, err := st.Balance(ctx, acct.ID); err != nil || final < 0 {
				t.Fatalf("final balance %d cents, %v", final, err)
			}
		})
	}
}
