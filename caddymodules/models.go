package caddymodules

import (
	"strconv"
	"strings"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/switchyardhq/switchyard/internal/duration"
	"github.com/switchyardhq/switchyard/policy/limits"
	"github.com/switchyardhq/switchyard/routing"
)

// unmarshalModel reads a model block. Syntax:
//
//	model <name> {
//		upstream <base_url> [{
//			api_key <key>
//			model   <upstream model name>
//			weight  <n>
//			name    <name>
//		}]
//		lb_policy               round_robin|least_conn|weighted_round_robin|first|random
//		retries                 <n>
//		health_path             <path>|off
//		health_interval         <duration>
//		health_timeout          <duration>
//		fail_duration           <duration>
//		max_fails               <n>
//		unhealthy_latency       <duration>
//		unhealthy_status        <status>...|none
//		dial_timeout            <duration>
//		response_header_timeout <duration>
//		price                   <input usd per 1M tokens> <output usd per 1M tokens>
//		fallback                <model>...
//	}
func unmarshalModel(d *caddyfile.Dispenser) (*routing.Model, error) {
	m := new(routing.Model)
	if err := oneArg(d, &m.Name); err != nil {
		return nil, err
	}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		opt := d.Val()
		switch opt {
		case "upstream":
			u, err := unmarshalModelUpstream(d)
			if err != nil {
				return nil, err
			}
			m.Upstreams = append(m.Upstreams, u)
		case "fallback":
			args := d.RemainingArgs()
			if len(args) == 0 {
				return nil, d.ArgErr()
			}
			m.Fallbacks = append(m.Fallbacks, args...)
		case "price":
			args := d.RemainingArgs()
			if len(args) != 2 {
				return nil, d.ArgErr()
			}
			mp, err := limits.ParsePrice(args[0], args[1])
			if err != nil {
				return nil, d.Errf("price: %v", err)
			}
			m.Price = &mp
		case "unhealthy_status":
			args := d.RemainingArgs()
			if len(args) == 0 {
				return nil, d.ArgErr()
			}
			codes := []int{}
			for _, a := range args {
				if a == "none" && len(args) == 1 {
					break
				}
				c, err := strconv.Atoi(strings.TrimSuffix(a, "xx"))
				if err != nil {
					return nil, d.Errf("unhealthy_status: want statuses such as 5xx or 429, or none, not %q", a)
				}
				codes = append(codes, c)
			}
			m.UnhealthyStatus = &codes
		case "lb_policy":
			if err := oneArg(d, &m.LBPolicy); err != nil {
				return nil, err
			}
		case "health_path":
			if err := oneArg(d, &m.HealthPath); err != nil {
				return nil, err
			}
		case "retries", "max_fails":
			var v string
			if err := oneArg(d, &v); err != nil {
				return nil, err
			}
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return nil, d.Errf("%s: want a whole number, not %q", opt, v)
			}
			if opt == "retries" {
				m.Retries = &n
			} else {
				m.MaxFails = n
			}
		case "health_interval", "health_timeout", "fail_duration", "unhealthy_latency", "dial_timeout", "response_header_timeout":
			dst := map[string]*duration.Duration{
				"health_interval":         &m.HealthInterval,
				"health_timeout":          &m.HealthTimeout,
				"fail_duration":           &m.FailDuration,
				"unhealthy_latency":       &m.UnhealthyLatency,
				"dial_timeout":            &m.DialTimeout,
				"response_header_timeout": &m.ResponseHeaderTimeout,
			}[opt]
			if err := positiveDurationArg(d, dst); err != nil {
				return nil, err
			}
		default:
			return nil, d.Errf("unrecognized model option %q", opt)
		}
	}
	return m, nil
}

func unmarshalModelUpstream(d *caddyfile.Dispenser) (*routing.ModelUpstream, error) {
	u := new(routing.ModelUpstream)
	if err := oneArg(d, &u.URL); err != nil {
		return nil, err
	}
	err := blockOptions(d, d.Nesting(), "model upstream", map[string]optionReader{
		"api_key": stringOption(&u.APIKey),
		"model":   stringOption(&u.Model),
		"name":    stringOption(&u.Name),
		"weight":  positiveIntOption(&u.Weight),
	})
	if err != nil {
		return nil, err
	}
	return u, nil
}
