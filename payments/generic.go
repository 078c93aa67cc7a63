package payments

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"go.uber.org/zap"

	"github.com/switchyardhq/switchyard/internal/apierror"
	"github.com/switchyardhq/switchyard/internal/hmacsig"
	"github.com/switchyardhq/switchyard/storage"
)

// ProviderGeneric names the generic provider in payment events and
// references.
const ProviderGeneric = "generic"

// genericEvent is the generic provider's webhook body (docs/payments.md).
type genericEvent struct {
	ID          string `json:"id"`
	Type        string `json:"type"`
	Account     string `json:"account"`
	PaymentID   string `json:"payment_id"`
	RefundID    string `json:"refund_id"`
	AmountCents int64  `json:"amount_cents"`
	Currency    string `json:"currency"`
}

// GenericWebhook serves the generic provider's webhook: a POST whose
// Switchyard-Signature header signs the body with the shared secret
// (internal/hmacsig), telling that a payment succeeded
// ("payment.succeeded": credit the named account) or was refunded
// ("payment.refunded": debit the account the payment credited).
func (s *Service) GenericWebhook(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	g := s.cfg.Generic
	if g == nil {
		apierror.Write(w, ErrNotConfigured)
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		apierror.Write(w, apierror.New(http.StatusMethodNotAllowed, apierror.TypeInvalidRequest, "method_not_allowed", "Webhooks are POSTed."))
		return
	}
	body, err := readBody(r)
	if err != nil {
		apierror.Write(w, err)
		return
	}
	switch err := hmacsig.Verify(r.Header.Get(hmacsig.Header), body, g.Secret, s.cfg.Now(), g.Tolerance); {
	case errors.Is(err, hmacsig.ErrTimestamp):
		apierror.Write(w, apierror.InvalidRequest("signature_too_old",
			"The "+hmacsig.Header+" timestamp is outside the tolerance; a replayed delivery is refused."))
		return
	case err != nil:
		s.cfg.Logger.Info("generic payment webhook refused", zap.Error(err))
		apierror.Write(w, apierror.InvalidRequest("invalid_signature",
			"The "+hmacsig.Header+" header does not verify with the shared secret: "+err.Error()+"."))
		return
	}
	pe, err := s.genericEvent(r, body)
	if err != nil {
		apierror.Write(w, err)
		return
	}
	s.record(w, r, pe)
}

func (s *Service) genericEvent(r *http.Request, body []byte) (storage.PaymentEvent, error) {
	var ev genericEvent
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&ev); err != nil {
		return storage.PaymentEvent{}, apierror.InvalidRequest("invalid_event", "The body is not a payment event: "+err.Error())
	}
	for _, f := range []struct{ name, v string }{{"id", ev.ID}, {"payment_id", ev.PaymentID}} {
		if !token(f.v) {
			return storage.PaymentEvent{}, apierror.InvalidRequest("invalid_event", `"`+f.name+`" is 1 to 128 printable ASCII characters.`)
		}
	}
	pe := storage.PaymentEvent{Provider: ProviderGeneric, EventID: ev.ID, Type: ev.Type}
	if ev.Currency != "" && !strings.EqualFold(ev.Currency, "usd") {
		return pe, apierror.InvalidRequest("invalid_event", `"currency" is "usd", the balance's currency.`)
	}
	switch ev.Type {
	case "payment.succeeded":
		if ev.AmountCents < s.cfg.Profile.MinTopUpCents || ev.AmountCents > s.cfg.Profile.MaxTopUpCents {
			return pe, apierror.InvalidRequest("invalid_amount", "A payment adds "+usd(s.cfg.Profile.MinTopUpCents)+
				" to "+usd(s.cfg.Profile.MaxTopUpCents)+".")
		}
		acct, err := s.cfg.Store.AccountByName(r.Context(), ev.Account)
		if errors.Is(err, storage.ErrNotFound) {
			return pe, apierror.New(http.StatusNotFound, apierror.TypeInvalidRequest, "account_not_found",
				"No account named "+strings.ReplaceAll(ev.Account, `"`, "?")+"; nothing was credited.")
		}
		if err != nil {
			return pe, err
		}
		pe.AccountID = acct.ID
		pe.Payment = &storage.Payment{PaymentID: ev.PaymentID, AccountID: acct.ID, AmountCents: ev.AmountCents}
		pe.Entries = []storage.Entry{{AccountID: acct.ID, AmountCents: ev.AmountCents, Kind: storage.EntryTopUp,
			Reference: ref(ProviderGeneric, ev.PaymentID), Note: "payment " + ev.PaymentID}}
	case "payment.refunded":
		if !token(ev.RefundID) || ev.AmountCents <= 0 {
			return pe, apierror.InvalidRequest("invalid_event", `A refund has a "refund_id" and a positive "amount_cents".`)
		}
		pay, err := s.cfg.Store.PaymentByID(r.Context(), ProviderGeneric, ev.PaymentID)
		if errors.Is(err, storage.ErrNotFound) {
			// Its payment may still be on its way: answered so that
			// the provider delivers the refund again.
			return pe, apierror.New(http.StatusConflict, apierror.TypeInvalidRequest, "payment_not_found",
				"No payment "+ev.PaymentID+" was credited here (yet); deliver the refund again after its payment.")
		}
		if err != nil {
			return pe, err
		}
		pe.AccountID = pay.AccountID
		pe.Entries = []storage.Entry{{AccountID: pay.AccountID, AmountCents: -ev.AmountCents, Kind: storage.EntryRefund,
			Reference: ref(ProviderGeneric, "refund:"+ev.RefundID), Note: "refund " + ev.RefundID + " of payment " + ev.PaymentID}}
	default:
		pe.Outcome = "ignored"
	}
	return pe, nil
}

// token accepts 1 to 128 printable ASCII characters.
func token(s string) bool {
	if len(s) == 0 || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] > '~' {
			return false
		}
	}
	return true
}
