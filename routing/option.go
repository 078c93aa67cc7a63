package routing

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/switchyardhq/switchyard/internal/duration"
	"github.com/switchyardhq/switchyard/policy/limits"
)

// Errors of SetOption that the Caddyfile adapter words in its own terms
// (with the file and line).
var (
	ErrUnknownOption = errors.New("unknown option")
	ErrArgCount      = errors.New("wrong argument count")
)

// SetOption sets the option opt of a Caddyfile model block from its
// arguments, all but upstream (a block of its own), which the adapter
// reads:
//
//	lb_policy               round_robin|least_conn|weighted_round_robin|first|random
//	retries                 <n>
//	health_path             <path>|off
//	health_interval         <duration>
//	health_timeout          <duration>
//	fail_duration           <duration>
//	max_fails               <n>
//	unhealthy_latency       <duration>
//	unhealthy_status        <status>...|none
//	dial_timeout            <duration>
//	response_header_timeout <duration>
//	price                   <input usd per 1M tokens> <output usd per 1M tokens>
//	fallback                <model>...
//
// The error is ErrUnknownOption, ErrArgCount, or what the arguments got
// wrong, without the option's name. What Validate checks is left to it.
func (m *Model) SetOption(opt string, args []string) error {
	one := len(args) == 1
	switch opt {
	case "fallback":
		if len(args) == 0 {
			return ErrArgCount
		}
		m.Fallbacks = append(m.Fallbacks, args...)
	case "price":
		if len(args) != 2 {
			return ErrArgCount
		}
		mp, err := limits.ParsePrice(args[0], args[1])
		if err != nil {
			return err
		}
		m.Price = &mp
	case "unhealthy_status":
		if len(args) == 0 {
			return ErrArgCount
		}
		codes := []int{}
		for _, a := range args {
			if a == "none" && one {
				break
			}
			c, err := strconv.Atoi(strings.TrimSuffix(a, "xx"))
			if err != nil {
				return fmt.Errorf("want statuses such as 5xx or 429, or none, not %q", a)
			}
			codes = append(codes, c)
		}
		m.UnhealthyStatus = &codes
	case "lb_policy", "health_path":
		if !one {
			return ErrArgCount
		}
		*map[string]*string{"lb_policy": &m.LBPolicy, "health_path": &m.HealthPath}[opt] = args[0]
	case "retries", "max_fails":
		if !one {
			return ErrArgCount
		}
		n, err := strconv.Atoi(args[0])
		if err != nil || n < 0 {
			return fmt.Errorf("want a whole number, not %q", args[0])
		}
		if opt == "retries" {
			m.Retries = &n
		} else {
			m.MaxFails = n
		}
	case "health_interval", "health_timeout", "fail_duration", "unhealthy_latency", "dial_timeout", "response_header_timeout":
		if !one {
			return ErrArgCount
		}
		d, err := duration.Parse(args[0])
		if err != nil || d <= 0 {
			return fmt.Errorf("want a positive duration, not %q", args[0])
		}
		*map[string]*duration.Duration{
			"health_interval":         &m.HealthInterval,
			"health_timeout":          &m.HealthTimeout,
			"fail_duration":           &m.FailDuration,
			"unhealthy_latency":       &m.UnhealthyLatency,
			"dial_timeout":            &m.DialTimeout,
			"response_header_timeout": &m.ResponseHeaderTimeout,
		}[opt] = duration.Duration(d)
	default:
		return ErrUnknownOption
	}
	return nil
}
