package caddymodules

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	caddycmd "github.com/caddyserver/caddy/v2/cmd"
	"github.com/spf13/cobra"

	"github.com/switchyardhq/switchyard/internal/demobackend"
)

func init() {
	registerCLI(caddycmd.Command{
		Name:  "demo-backend",
		Usage: "--listen <addr> [--ttft <duration>] [--token-delay <duration>] [--model <name>] [--api-key <key>] [--reasoning]",
		Short: "Serves a deterministic OpenAI-compatible model backend for trying and benchmarking the gateway",
		Long: `
Serves GET /v1/models and POST /v1/chat/completions (JSON and streams, with
usage) with deterministic answers, so the gateway can be tried and
benchmarked without a model server. --ttft and --token-delay simulate
generation speed. See docs/demo-backend.md.
`,
		CobraFunc: func(cmd *cobra.Command) {
			f := cmd.Flags()
			f.String("listen", "127.0.0.1:9090", "Address to listen on")
			f.Duration("ttft", 0, "Delay before the first token")
			f.Duration("token-delay", 0, "Delay between tokens")
			f.StringSlice("model", nil, "Model names to list and accept (default: list switchyard-demo, accept any)")
			f.String("api-key", "", "Require this bearer key")
			f.Bool("reasoning", false, "Begin demo answers with reasoning_content")
			cmd.RunE = func(cmd *cobra.Command, _ []string) error {
				var opts demobackend.Options
				addr, _ := f.GetString("listen")
				opts.TimeToFirstToken, _ = f.GetDuration("ttft")
				opts.InterTokenDelay, _ = f.GetDuration("token-delay")
				opts.Models, _ = f.GetStringSlice("model")
				opts.APIKey, _ = f.GetString("api-key")
				opts.Reasoning, _ = f.GetBool("reasoning")
				ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
				defer stop()
				return demobackend.ListenAndServe(ctx, addr, opts)
			}
		},
	}, "switchyard demo-backend --listen 127.0.0.1:9090 --ttft 200ms --token-delay 20ms")
}
