package limits

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/dustin/go-humanize"

	"github.com/switchyardhq/switchyard/internal/duration"
	"github.com/switchyardhq/switchyard/policy"
)

// Errors of SetOption that the Caddyfile adapter words in its own terms
// (with the file and line).
var (
	ErrUnknownOption = errors.New("unknown option")
	ErrArgCount      = errors.New("wrong argument count")
)

// SetOption sets the option opt of the Caddyfile's limits block from its
// arguments, all but max_charge (money is billing's to parse) and queue
// (a block of its own), which the adapter reads:
//
//	requests      <n> <period> [rolling|rate]
//	streams       <n>
//	upload_size   <size>
//	stored_files  <n>
//	stored_bytes  <size>
//	inline_image  <size>
//	system_chars  <n>
//	price         <model> <input usd per 1M tokens> <output usd per 1M tokens>  (up to four decimals)
//	max_body      <size>
//	body_memory   <size>
//	account_body_memory <size>
//	body_timeout  <duration>
//	redis_timeout <duration>
//	rate_policy   fail_open|fail_closed
//	stream_policy fail_open|fail_closed
//	lease_ttl     <duration>
//	nodes         <n>
//	auth_failures <n> [<period>] | off
//
// Sizes take units (25MB, 25MiB). price may be given once per model.
// The error is ErrUnknownOption, ErrArgCount, or what the arguments got
// wrong, without the option's name.
func (c *Config) SetOption(opt string, args []string) error {
	switch opt {
	case "requests":
		if len(args) < 2 || len(args) > 3 {
			return ErrArgCount
		}
		return c.setRequests(args)
	case "streams", "stored_files", "nodes", "system_chars":
		if len(args) != 1 {
			return ErrArgCount
		}
		var n int
		var err error
		if opt == "system_chars" {
			n, err = strconv.Atoi(args[0])
			if err == nil && n < 0 {
				err = errors.New("must not be negative")
			}
		} else {
			n, err = PositiveInt(args[0])
		}
		switch opt {
		case "streams":
			c.Streams = n
		case "stored_files":
			c.MaxStoredFiles = n
		case "nodes":
			c.Nodes = n
		case "system_chars":
			c.MaxSystemChars = &n
		}
		return err
	case "upload_size", "stored_bytes", "inline_image", "max_body", "body_memory", "account_body_memory":
		if len(args) != 1 {
			return ErrArgCount
		}
		size, err := humanize.ParseBytes(args[0])
		if err != nil {
			err = fmt.Errorf("want a size such as 25MiB or 500MB, not %q", args[0])
		} else if size == 0 {
			err = errors.New("must be positive")
		}
		*map[string]*int64{
			"upload_size":         &c.MaxUploadBytes,
			"stored_bytes":        &c.MaxStoredBytes,
			"inline_image":        &c.MaxInlineImageBytes,
			"max_body":            &c.MaxBodyBytes,
			"body_memory":         &c.BodyMemory,
			"account_body_memory": &c.AccountBodyMemory,
		}[opt] = int64(size)
		return err
	case "price":
		if len(args) != 3 {
			return ErrArgCount
		}
		if _, dup := c.Prices[args[0]]; dup {
			return fmt.Errorf("model %q priced twice", args[0])
		}
		mp, err := ParsePrice(args[1], args[2])
		if err != nil {
			return err
		}
		if c.Prices == nil {
			c.Prices = make(map[string]policy.ModelPrice)
		}
		c.Prices[args[0]] = mp
		return nil
	case "redis_timeout", "lease_ttl", "body_timeout":
		if len(args) != 1 {
			return ErrArgCount
		}
		dur, err := duration.Parse(args[0])
		if err == nil && dur <= 0 {
			err = errors.New("must be positive")
		}
		*map[string]*duration.Duration{
			"redis_timeout": &c.RedisTimeout,
			"lease_ttl":     &c.LeaseTTL,
			"body_timeout":  &c.BodyTimeout,
		}[opt] = duration.Duration(dur)
		return err
	case "rate_policy", "stream_policy":
		if len(args) != 1 {
			return ErrArgCount
		}
		if opt == "rate_policy" {
			c.RatePolicy = args[0]
		} else {
			c.StreamPolicy = args[0]
		}
		_, err := ParseFailurePolicy(args[0])
		return err
	case "auth_failures":
		return c.setAuthFailures(args)
	}
	return ErrUnknownOption
}

// setRequests reads <n> <period> [rolling|rate].
func (c *Config) setRequests(args []string) error {
	n, err := PositiveInt(args[0])
	if err != nil {
		return err
	}
	c.Requests = n
	period, err := duration.Parse(args[1])
	if err != nil {
		return err
	}
	c.RequestsPeriod = duration.Duration(period)
	if len(args) == 3 {
		switch args[2] {
		case "rolling":
			c.Rolling = new(bool)
			*c.Rolling = true
		case "rate":
			c.Rolling = new(bool)
		default:
			return fmt.Errorf("want rolling or rate, not %q", args[2])
		}
	}
	return nil
}

// setAuthFailures reads <n> [<period>] | off.
func (c *Config) setAuthFailures(args []string) error {
	if len(args) == 1 && args[0] == "off" {
		c.AuthFailures = new(int)
		return nil
	}
	if len(args) < 1 || len(args) > 2 {
		return errors.New("want <n> [<period>] or off")
	}
	n, err := PositiveInt(args[0])
	if err != nil {
		return err
	}
	c.AuthFailures = &n
	if len(args) == 2 {
		d, err := duration.Parse(args[1])
		if err != nil || d <= 0 {
			return fmt.Errorf("want a positive period, not %q", args[1])
		}
		c.AuthFailuresPeriod = duration.Duration(d)
	}
	return nil
}

// PositiveInt reads a count of a config, a whole number above 0.
func PositiveInt(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("want a positive whole number, not %q", s)
	}
	return n, nil
}

// ParsePrice reads a model's price from its two arguments, dollars per
// million input tokens and per million output tokens, with up to four
// decimals each (0.075 is 7.5 cents).
func ParsePrice(input, output string) (policy.ModelPrice, error) {
	var mp policy.ModelPrice
	var err error
	if mp.InputPerMTok, err = policy.ParseUSDPerMTok(input); err != nil {
		return mp, err
	}
	mp.OutputPerMTok, err = policy.ParseUSDPerMTok(output)
	return mp, err
}
