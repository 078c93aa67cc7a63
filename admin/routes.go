package admin

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/switchyardhq/switchyard/billing"
	"github.com/switchyardhq/switchyard/files"
	"github.com/switchyardhq/switchyard/internal/apierror"
	"github.com/switchyardhq/switchyard/internal/clip"
	"github.com/switchyardhq/switchyard/policy"
	"github.com/switchyardhq/switchyard/storage"
)

// meJSON is GET /admin/me.
type meJSON struct {
	Subject  string   `json:"subject"`
	Role     string   `json:"role"`
	Operator bool     `json:"operator,omitempty"`
	Accounts []string `json:"accounts,omitempty"`
	// CanTopUp tells a client such as the dashboard whether to offer
	// crediting a balance directly (POST .../topups); see
	// Principal.MayTopUp.
	CanTopUp bool `json:"can_top_up"`
	// CanCheckout tells whether funds can be added through a payment
	// provider's page (POST .../checkout), for any token that manages
	// an account.
	CanCheckout bool `json:"can_checkout"`
	// EmailAlerts tells whether alerts may go to an email address.
	EmailAlerts bool `json:"email_alerts"`
}

func (q *request) me() {
	q.reply(http.StatusOK, meJSON{Subject: q.who.Subject, Role: q.who.Role(), Operator: q.who.Operator,
		Accounts: q.who.Accounts, CanTopUp: q.who.MayTopUp(), CanCheckout: q.h.cfg.Payments.CheckoutEnabled(),
		EmailAlerts: q.h.cfg.Alerts.EmailEnabled()})
}

// accountJSON is an account with its balance.
type accountJSON struct {
	ID            string `json:"id"`
	Name          string `json:"name"`
	BalanceCents  int64  `json:"balance_cents"`
	ReservedCents int64  `json:"reserved_cents"`
	CreatedAt     int64  `json:"created_at"`
	Disabled      bool   `json:"disabled"`
	DisabledAt    *int64 `json:"disabled_at"`
}

func (q *request) accountOut(a storage.Account, balance int64) (accountJSON, error) {
	out := accountJSON{ID: a.ID, Name: a.Name, BalanceCents: balance, CreatedAt: unixTime(a.CreatedAt), Disabled: a.Disabled()}
	if a.Disabled() {
		out.DisabledAt = UnixTimeOrNull(a.DisabledAt)
	}
	if q.h.cfg.Held != nil {
		held, err := q.h.cfg.Held.Held(q.ctx, a.ID)
		if err != nil {
			return out, fmt.Errorf("reading holds: %w", err)
		}
		out.ReservedCents = held
	}
	return out, nil
}

// accountNow is accountOut with the balance the store holds now.
func (q *request) accountNow(a storage.Account) (accountJSON, error) {
	bal, err := q.h.cfg.Store.Balance(q.ctx, a.ID)
	if err != nil {
		return accountJSON{}, err
	}
	return q.accountOut(a, bal)
}

// listAccounts: an operator's token lists every account, another token
// the accounts it names; both by name, bytewise. The cursor is the name,
// since the name is what names an account in every admin URL.
func (q *request) listAccounts() {
	p, err := pageParams(q.r, func(s string) bool { return policy.ValidAccountName(s) == nil })
	if err != nil {
		q.fail(err)
		return
	}
	var out []accountJSON
	more := false
	if q.who.Operator {
		rows, err := q.h.cfg.Store.ListAccounts(q.ctx, p.after, p.limit+1)
		if err != nil {
			q.fail(err)
			return
		}
		rows, more = trim(rows, p.limit)
		for _, r := range rows {
			a, err := q.accountOut(r.Account, r.BalanceCents)
			if err != nil {
				q.fail(err)
				return
			}
			out = append(out, a)
		}
	} else {
		names := slices.Clone(q.who.Accounts)
		slices.Sort(names)
		names = slices.Compact(names)
		for _, name := range names {
			if name <= p.after {
				continue
			}
			a, err := q.h.cfg.Store.AccountByName(q.ctx, name)
			if errors.Is(err, storage.ErrNotFound) {
				continue
			}
			if err == nil && len(out) == p.limit {
				// An account that exists beyond the page: only then is
				// there more to ask for.
				more = true
				break
			}
			var acct accountJSON
			if err == nil {
				acct, err = q.accountNow(a)
			}
			if err != nil {
				q.fail(err)
				return
			}
			out = append(out, acct)
		}
	}
	q.reply(http.StatusOK, pageEach(out, more, func(a accountJSON) accountJSON { return a },
		func(a accountJSON) string { return a.Name }))
}

// createAccount: POST /admin/accounts {"name", "usd"?}, operators only.
// The amount is checked before the account is created, so a refused
// top-up leaves nothing behind.
func (q *request) createAccount() {
	if !q.operatorOnly("account.create") {
		return
	}
	var body struct {
		Name string  `json:"name"`
		USD  *string `json:"usd"`
	}
	err := q.decode(&body)
	var cents int64
	if err == nil {
		err = policy.ValidAccountName(body.Name)
	}
	if err == nil && body.USD != nil {
		if cents, err = parseUSD(*body.USD); err == nil {
			err = billing.CheckTopUp(q.h.cfg.Profile, cents)
		}
	}
	if err == nil {
		if _, lookErr := q.h.cfg.Store.AccountByName(q.ctx, body.Name); lookErr == nil {
			err = apierror.New(http.StatusConflict, apierror.TypeInvalidRequest, "account_exists",
				"An account named "+quote(body.Name)+" already exists.")
		} else if !errors.Is(lookErr, storage.ErrNotFound) {
			err = lookErr
		}
	}
	var acct storage.Account
	balance := int64(0)
	if err == nil {
		acct, err = q.h.cfg.Store.EnsureAccount(q.ctx, body.Name)
	}
	if err == nil && cents > 0 {
		var e storage.LedgerEntry
		e, err = billing.TopUp(q.ctx, q.h.cfg.Store, q.h.cfg.Profile, acct.ID, cents,
			"admin_"+policy.RandomBase62(20), "starting balance, admin API by "+clipNote(q.who.Subject))
		balance = e.BalanceAfterCents
	}
	detail := ""
	if cents > 0 {
		detail = billing.FormatCents(cents)
	}
	q.audit("account.create", body.Name, "", outcome(err), detail)
	if err != nil {
		q.fail(err)
		return
	}
	out, err := q.accountOut(acct, balance)
	q.answer(http.StatusCreated, out, err)
}

func (q *request) getAccount(a storage.Account) {
	out, err := q.accountNow(a)
	q.answer(http.StatusOK, out, err)
}

// KeyJSON is a key as listed: never the key itself. The CLI's --json
// prints the same.
type KeyJSON struct {
	ID        string `json:"id"`
	Hint      string `json:"hint"`
	Label     string `json:"label"`
	CreatedAt int64  `json:"created_at"`
	RevokedAt *int64 `json:"revoked_at"`
	// LastUsedAt is when a charge of the key was last committed; null if
	// never.
	LastUsedAt *int64 `json:"last_used_at"`
	KeyControlsJSON
}

// KeyOf is k as the admin API lists it.
func KeyOf(k storage.APIKey) KeyJSON {
	out := KeyJSON{ID: k.ID, Hint: k.Hint, Label: k.Label, CreatedAt: unixTime(k.CreatedAt), KeyControlsJSON: KeyControlsOf(k.Controls)}
	if !k.Active() {
		out.RevokedAt = UnixTimeOrNull(k.RevokedAt)
	}
	out.LastUsedAt = UnixTimeOrNull(k.LastUsedAt)
	return out
}

// listKeys pages the account's keys, newest first. The store lists them
// whole (25 active at most, and the revoked), so the page is cut here.
func (q *request) listKeys(a storage.Account) {
	p, err := pageParams(q.r, hasPrefixID("key_"))
	if err != nil {
		q.fail(err)
		return
	}
	keys, err := q.h.cfg.Store.ListKeys(q.ctx, a.ID)
	if err != nil {
		q.fail(err)
		return
	}
	if p.after != "" {
		i := slices.IndexFunc(keys, func(k storage.APIKey) bool { return k.ID == p.after })
		if i < 0 {
			q.fail(unknownCursor("key"))
			return
		}
		keys = keys[i+1:]
	}
	keys, more := trim(keys, p.limit)
	q.reply(http.StatusOK, pageEach(keys, more, KeyOf, func(k storage.APIKey) string { return k.ID }))
}

// unknownCursor refuses an after that is well formed but names no item
// of the list, for lists whose order is not the ids' own.
func unknownCursor(item string) error {
	return apierror.InvalidRequest("invalid_after", "after names no "+item+" of this list; give the last_id of the previous page.")
}

// createKey: POST .../keys {"label", and the controls of
// KeyControlsJSON}: the only answer that holds the key.
func (q *request) createKey(a storage.Account) {
	var body struct {
		Label string `json:"label"`
		KeyControlsJSON
	}
	err := q.decode(&body)
	var controls storage.KeyControls
	if err == nil {
		controls, err = body.Controls(time.Now())
	}
	var key string
	var rec storage.APIKey
	if err == nil {
		key, rec, err = policy.IssueKeyWith(q.ctx, q.h.cfg.Store, q.h.cfg.Hasher, q.h.cfg.Profile, a.Name, body.Label, controls, time.Now())
	}
	q.audit("key.create", a.Name, rec.ID, outcome(err), clipNote(body.Label))
	if err != nil {
		q.fail(err)
		return
	}
	q.reply(http.StatusCreated, struct {
		ID        string `json:"id"`
		Key       string `json:"key"`
		Hint      string `json:"hint"`
		Label     string `json:"label"`
		CreatedAt int64  `json:"created_at"`
		KeyControlsJSON
	}{rec.ID, key, rec.Hint, rec.Label, unixTime(rec.CreatedAt), KeyControlsOf(rec.Controls)})
}

func (q *request) revokeKey(a storage.Account, id string) {
	k, err := policy.RevokeKey(q.ctx, q.h.cfg.Store, a.ID, id)
	q.audit("key.revoke", a.Name, clipNote(id), outcome(err), "")
	q.answer(http.StatusOK, KeyOf(k), err)
}

// ledgerJSON is a ledger entry.
type ledgerJSON struct {
	ID                string `json:"id"`
	Kind              string `json:"kind"`
	AmountCents       int64  `json:"amount_cents"`
	BalanceAfterCents int64  `json:"balance_after_cents"`
	Reference         string `json:"reference"`
	Note              string `json:"note"`
	CreatedAt         int64  `json:"created_at"`
}

func entryOut(e storage.LedgerEntry) ledgerJSON {
	return ledgerJSON{ID: e.ID, Kind: string(e.Kind), AmountCents: e.AmountCents, BalanceAfterCents: e.BalanceAfterCents,
		Reference: e.Reference, Note: e.Note, CreatedAt: unixTime(e.CreatedAt)}
}

// topUp: POST .../topups {"usd": "5.00"} or {"cents": 500}, with an
// optional idempotency "reference".
func (q *request) topUp(a storage.Account) {
	var body struct {
		USD       *string `json:"usd"`
		Cents     *int64  `json:"cents"`
		Reference string  `json:"reference"`
	}
	err := q.decode(&body)
	var cents int64
	if err == nil {
		switch {
		case (body.USD == nil) == (body.Cents == nil):
			err = apierror.InvalidRequest("invalid_amount", `Give the amount as exactly one of "usd" (such as "25.00") or "cents".`)
		case body.USD != nil:
			cents, err = parseUSD(*body.USD)
		default:
			cents = *body.Cents
		}
	}
	if err == nil && body.Reference != "" && (len(body.Reference) > 128 || !printableASCII(body.Reference)) {
		err = apierror.InvalidRequest("invalid_reference", "A reference is 1 to 128 printable ASCII characters.")
	}
	if err == nil && body.Reference != "" {
		err = billing.CheckTopUpReference(body.Reference)
	}
	ref := body.Reference
	if ref == "" {
		ref = "admin_" + policy.RandomBase62(20)
	}
	status := http.StatusCreated
	var e storage.LedgerEntry
	if err == nil {
		e, err = billing.TopUp(q.ctx, q.h.cfg.Store, q.h.cfg.Profile, a.ID, cents, ref, "admin API top-up by "+clipNote(q.who.Subject))
		if errors.Is(err, storage.ErrDuplicateReference) {
			// A retry of the same amount: the first post stands and
			// nothing changed. Another amount is reference_conflict.
			err, status = nil, http.StatusOK
		}
	}
	q.audit("topup", a.Name, clipNote(ref), outcome(err), billing.FormatCents(cents))
	if err != nil {
		q.fail(err)
		return
	}
	bal, err := q.h.cfg.Store.Balance(q.ctx, a.ID)
	if err != nil {
		q.fail(err)
		return
	}
	q.reply(status, struct {
		Entry        ledgerJSON `json:"entry"`
		BalanceCents int64      `json:"balance_cents"`
	}{entryOut(e), bal})
}

func parseUSD(s string) (int64, error) {
	cents, err := billing.ParseUSD(s)
	if err != nil {
		return 0, apierror.InvalidRequest("invalid_amount", `"usd" is a dollar amount such as "25" or "12.50".`)
	}
	return cents, nil
}

func (q *request) ledger(a storage.Account) {
	p, err := pageParams(q.r, hasPrefixID("le_"))
	if err != nil {
		q.fail(err)
		return
	}
	var entries []storage.LedgerEntry
	if p.after == "" {
		entries, err = q.h.cfg.Store.Entries(q.ctx, a.ID, p.limit+1)
	} else {
		entries, err = q.h.cfg.Store.EntriesAfter(q.ctx, a.ID, p.after, p.limit+1)
		if errors.Is(err, storage.ErrNotFound) {
			err = unknownCursor("ledger entry")
		}
	}
	if err != nil {
		q.fail(err)
		return
	}
	entries, more := trim(entries, p.limit)
	q.reply(http.StatusOK, pageEach(entries, more, entryOut, func(e storage.LedgerEntry) string { return e.ID }))
}

// usage: GET .../usage?since=&until=&by=, the report `switchyard usage`
// prints.
func (q *request) usage(a storage.Account) {
	v := q.r.URL.Query()
	today := q.h.cfg.Now().UTC().Truncate(24 * time.Hour)
	first, last := today.AddDate(0, 0, -30), today
	for _, p := range []struct {
		name string
		day  *time.Time
	}{{"since", &first}, {"until", &last}} {
		s := v.Get(p.name)
		if s == "" {
			continue
		}
		d, err := time.Parse(time.DateOnly, s)
		if err != nil {
			q.fail(apierror.InvalidRequest("invalid_date", p.name+" is a date such as 2026-01-31."))
			return
		}
		*p.day = d
	}
	if last.Before(first) {
		q.fail(apierror.InvalidRequest("invalid_date", "until is before since."))
		return
	}
	by := storage.UsageGrouping(v.Get("by"))
	switch by {
	case "":
		by = storage.UsageByDay
	case storage.UsageByDay, storage.UsageByKey, storage.UsageByEndUser, storage.UsageByModel:
	default:
		q.fail(apierror.InvalidRequest("invalid_grouping", "by is day, key, user or model."))
		return
	}
	rows, err := q.h.cfg.Store.UsageSummary(q.ctx, a.ID, storage.UsageQuery{Since: first, Until: last.AddDate(0, 0, 1), By: by})
	if err != nil {
		q.fail(err)
		return
	}
	// A report, not a paged list: every row of the period at once, so
	// has_more is always false (and says so, as the CLI's --json does).
	q.reply(http.StatusOK, struct {
		Since   string         `json:"since"`
		Until   string         `json:"until"`
		By      string         `json:"by"`
		Data    []UsageJSONRow `json:"data"`
		HasMore bool           `json:"has_more"`
	}{first.Format(time.DateOnly), last.Format(time.DateOnly), string(by), UsageJSON(by, rows), false})
}

// fileJSON is a file's metadata.
type fileJSON struct {
	ID        string `json:"id"`
	Filename  string `json:"filename"`
	Purpose   string `json:"purpose"`
	Bytes     int64  `json:"bytes"`
	MIME      string `json:"mime_type"`
	Source    string `json:"source"`
	CreatedAt int64  `json:"created_at"`
	// ExpiresAt is null for a file kept until deleted.
	ExpiresAt *int64 `json:"expires_at"`
}

func (q *request) filesService() (*files.Service, error) {
	if q.h.cfg.Files == nil {
		return nil, apierror.New(http.StatusNotImplemented, apierror.TypeInvalidRequest, "not_implemented",
			"This gateway does not serve the Files API.")
	}
	return q.h.cfg.Files()
}

// listFiles: GET .../files?limit=&after=, newest first. A file id is
// its own cursor: ids sort by creation, so after need not name a file
// that still exists.
func (q *request) listFiles(a storage.Account) {
	svc, err := q.filesService()
	if err != nil {
		q.fail(err)
		return
	}
	p, err := pageParams(q.r, files.ValidID)
	if err != nil {
		q.fail(err)
		return
	}
	pg, err := svc.List(q.ctx, a.ID, storage.FileListParams{Limit: p.limit, After: p.after})
	if err != nil {
		q.fail(files.APIError(err))
		return
	}
	q.reply(http.StatusOK, pageEach(pg.Files, pg.HasMore, func(f storage.File) fileJSON {
		return fileJSON{ID: f.ID, Filename: f.Filename, Purpose: f.Purpose, Bytes: f.Bytes, MIME: f.MIME,
			Source: string(f.Source), CreatedAt: unixTime(f.CreatedAt), ExpiresAt: UnixTimeOrNull(f.ExpiresAt)}
	}, func(f storage.File) string { return f.ID }))
}

// fileContent: GET .../files/{id}/content, the file's bytes as a
// download (the dashboard's Download button).
func (q *request) fileContent(a storage.Account, id string) {
	svc, err := q.filesService()
	if err != nil {
		q.fail(err)
		return
	}
	files.WriteContent(q.w, q.r, svc, a.ID, id)
}

func (q *request) deleteFile(a storage.Account, id string) {
	svc, err := q.filesService()
	if err == nil {
		_, err = svc.Delete(q.ctx, a.ID, id)
		if errors.Is(err, files.ErrNotFound) {
			err = apierror.New(http.StatusNotFound, apierror.TypeInvalidRequest, "file_not_found", "No file with id "+quote(id)+".")
		} else if err != nil {
			err = files.APIError(err)
		}
	}
	q.audit("file.delete", a.Name, clipNote(id), outcome(err), "")
	if err != nil {
		q.fail(err)
		return
	}
	q.reply(http.StatusOK, struct {
		ID      string `json:"id"`
		Deleted bool   `json:"deleted"`
	}{id, true})
}

// clipNote bounds a caller-supplied value stored in the audit log or a
// ledger note.
func clipNote(s string) string { return clip.Runes(s, 200) }

func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] > '~' {
			return false
		}
	}
	return s != ""
}
