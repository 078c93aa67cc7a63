package alerts

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/mail"
	"net/smtp"
	"strings"
	"time"

	"github.com/switchyardhq/switchyard/storage"
)

// SMTPConfig is the mail server email alerts go through.
type SMTPConfig struct {
	// Addr is the server's host:port. Required.
	Addr string
	// From is the sender address. Required.
	From string
	// Username and Password authenticate with PLAIN when Username is
	// set; net/smtp sends them only over TLS or to localhost.
	Username, Password string
	// StartTLS requires the server to offer STARTTLS and uses it.
	// Default: false (it is used when offered).
	StartTLS bool
	// TLSConfig is used for STARTTLS. Default: verify the server's
	// certificate against Addr's host.
	TLSConfig *tls.Config
}

// CheckEmail refuses an address that is not one plain mailbox.
func CheckEmail(addr string) error {
	a, err := mail.ParseAddress(addr)
	if err != nil || a.Address != addr || len(addr) > 254 || strings.ContainsAny(addr, "\r\n") {
		return errors.New("an email address is one plain mailbox such as ops@example.com")
	}
	return nil
}

// send mails one alert.
func (c *SMTPConfig) send(ctx context.Context, timeout time.Duration, to string, del storage.AlertDelivery) error {
	if err := CheckEmail(to); err != nil {
		return fmt.Errorf("%v: %w", err, errPermanent)
	}
	host, _, err := net.SplitHostPort(c.Addr)
	if err != nil {
		return fmt.Errorf("smtp address %q: %v: %w", c.Addr, err, errPermanent)
	}
	conn, err := (&net.Dialer{Timeout: timeout}).DialContext(ctx, "tcp", c.Addr)
	if err != nil {
		return err
	}
	_ = conn.SetDeadline(time.Now().Add(timeout))
	client, err := smtp.NewClient(conn, host)
	if err != nil {
		conn.Close()
		return err
	}
	defer client.Close()
	if ok, _ := client.Extension("STARTTLS"); ok {
		cfg := c.TLSConfig
		if cfg == nil {
			cfg = &tls.Config{ServerName: host, MinVersion: tls.VersionTLS12}
		}
		if err := client.StartTLS(cfg); err != nil {
			return err
		}
	} else if c.StartTLS {
		return errors.New("the SMTP server does not offer STARTTLS")
	}
	if c.Username != "" {
		if err := client.Auth(smtp.PlainAuth("", c.Username, c.Password, host)); err != nil {
			return err
		}
	}
	if err := client.Mail(c.From); err != nil {
		return err
	}
	if err := client.Rcpt(to); err != nil {
		return err
	}
	w, err := client.Data()
	if err != nil {
		return err
	}
	if _, err := w.Write(message(c.From, to, del)); err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	return client.Quit()
}

// message is the mail, headers and a plain-text body, CRLF-terminated.
func message(from, to string, del storage.AlertDelivery) []byte {
	switch del.Kind {
	case storage.AlertKeySpend:
		return keySpendMessage(from, to, del)
	case storage.AlertAutoTopUpFailed:
		return autoTopUpFailedMessage(from, to, del)
	}
	p := payload(del)
	lines := append(headers(from, to, "Switchyard: balance of "+p.Account+" is below "+dollars(p.ThresholdCents), del),
		"The balance of account "+p.Account+" fell to "+dollars(p.BalanceCents)+",",
		"below the alert threshold of "+dollars(p.ThresholdCents)+".",
		"",
		"Add funds on the dashboard, or ask an operator to. This alert is sent",
		"once per crossing: the next one comes after the balance has risen above",
		"the threshold and fallen below it again.",
		"",
		"Alert "+p.ID+", "+mailTime(p.CreatedAt),
	)
	return []byte(strings.Join(lines, "\r\n") + "\r\n")
}

// keySpendMessage is the mail of a key spend alert.
func keySpendMessage(from, to string, del storage.AlertDelivery) []byte {
	p := keySpendPayload(del)
	key := p.KeyID
	if label := oneLine(p.KeyLabel); label != "" {
		key = label + " (" + p.KeyID + ")"
	}
	period, unit := "daily", "day"
	if p.SpendPeriod == string(storage.SpendPerMonth) {
		period, unit = "monthly", "month"
	}
	lines := append(headers(from, to, "Switchyard: key "+key+" of "+p.Account+" has spent "+dollars(p.SpendCents)+
		" of its "+period+" limit of "+dollars(p.LimitCents), del),
		"The key "+key+" of account "+p.Account+" has spent "+dollars(p.SpendCents)+" this "+unit+" (UTC),",
		"reaching the alert's share ("+dollars(p.ThresholdCents)+") of its "+period+" spend limit of "+dollars(p.LimitCents)+".",
		"",
		"Requests that would take it past the limit are refused with 402",
		"key_spend_limit_reached until the period ends. Raise the limit with",
		"`keys set` or the admin API if this key needs more. This alert is sent",
		"once per key and period.",
		"",
		"Alert "+p.ID+", "+mailTime(p.CreatedAt),
	)
	return []byte(strings.Join(lines, "\r\n") + "\r\n")
}

// headers are a message's headers and the blank line that ends them.
func headers(from, to, subject string, del storage.AlertDelivery) []string {
	return []string{
		"From: " + from,
		"To: " + to,
		"Subject: " + oneLine(subject),
		"Date: " + del.CreatedAt.UTC().Format(time.RFC1123Z),
		"Message-ID: <" + del.ID + "@switchyard>",
		"MIME-Version: 1.0",
		"Content-Type: text/plain; charset=utf-8",
		"",
	}
}

// oneLine drops control characters, so that a key label cannot end a
// header or start one of its own.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, s)
}

// mailTime is a payload's time (Unix seconds) as a mail shows it to
// people: in UTC, to the second.
func mailTime(unix int64) string {
	return time.Unix(unix, 0).UTC().Format("2006-01-02 15:04:05 UTC")
}

func dollars(c int64) string {
	sign := ""
	if c < 0 {
		sign, c = "-", -c
	}
	return fmt.Sprintf("%s$%d.%02d", sign, c/100, c%100)
}

// autoTopUpFailedMessage is the mail of a failed automatic top-up.
func autoTopUpFailedMessage(from, to string, del storage.AlertDelivery) []byte {
	p := autoTopUpFailedPayload(del)
	next := fmt.Sprintf("It is tried again in an hour if the balance is still below %s; after %d failures",
		dollars(p.ThresholdCents), storage.AutoTopUpMaxFailures)
	if p.TurnedOff {
		next = fmt.Sprintf("This was failure %d in a row: auto top-up is now turned off. Add funds on the", p.Failures)
	}
	lines := append(headers(from, to, "Switchyard: automatic top-up of "+p.Account+" failed", del),
		"An automatic top-up of "+dollars(p.AmountCents)+" for account "+p.Account+" failed:",
		oneLine(p.Reason)+".",
		"The balance is "+dollars(p.BalanceCents)+".",
		"",
		next,
	)
	if p.TurnedOff {
		lines = append(lines, "dashboard (which can save another card) and turn auto top-up on again.")
	} else {
		lines = append(lines, "in a row auto top-up is turned off. Check the card saved for it.")
	}
	lines = append(lines, "", "Alert "+p.ID+", "+mailTime(p.CreatedAt))
	return []byte(strings.Join(lines, "\r\n") + "\r\n")
}
