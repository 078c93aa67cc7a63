package caddymodules

import (
	"errors"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/switchyardhq/switchyard/internal/configcheck"
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
		if opt == "upstream" {
			u, err := unmarshalModelUpstream(d)
			if err != nil {
				return nil, err
			}
			m.Upstreams = append(m.Upstreams, u)
			continue
		}
		err := m.SetOption(opt, d.RemainingArgs())
		switch {
		case errors.Is(err, routing.ErrUnknownOption):
			return nil, d.Errf("unrecognized model option %q", opt)
		case errors.Is(err, routing.ErrArgCount):
			return nil, d.ArgErr()
		case err != nil:
			return nil, d.Errf("%s: %v", opt, err)
		}
		// Refused at the line that sets them rather than when the config
		// loads, which has no file and line to point at.
		for _, err := range []error{routing.CheckLBPolicy(m.LBPolicy), routing.CheckHealthPath(m.HealthPath)} {
			if err != nil {
				return nil, d.Err(err.Error())
			}
		}
	}
	return m, nil
}

func unmarshalModelUpstream(d *caddyfile.Dispenser) (*routing.ModelUpstream, error) {
	u := new(routing.ModelUpstream)
	if err := oneArg(d, &u.URL); err != nil {
		return nil, err
	}
	if err := configcheck.Literal(u.URL, configcheck.URL("http://10.0.0.7:8000/v1", "http", "https")); err != nil {
		return nil, d.Errf("upstream: %v", err)
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
