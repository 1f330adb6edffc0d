package callcount_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework"
	"github.com/apply-hygiene/apply-hygiene/test/e2e/framework/devenv"
)

// row is what one kind's window measured.
type row struct {
	writes      map[string]int
	intercepted int
	// mutate and validate are the apply-hygiene server's reviews; calls
	// and excluded the API server's calls to both webhooks and the calls
	// their matchConditions spared.
	mutate, validate, calls, excluded int
	// acted counts the reviews that did more than allow.
	acted int
}

// The writes controllers make to the common kinds reach apply-hygiene
// only where a rule can act: with the chart's matchConditions the API
// server calls neither webhook for any of them (the control row, a
// person's kubectl label, still reaches the validating webhook); with the
// matchConditions removed, every one of those writes to an intercepted
// resource is a call, and the server only allows it: the conditions spare
// exactly calls whose answer is a plain allow.
func TestControllerWritesPerKind(t *testing.T) {
	with := measure(t, "with")
	restore := removeMatchConditions(t)
	without := measure(t, "without")
	restore()
	logTable(t, with, without)
	for _, kc := range kindCases {
		w, wo := with[kc.kind], without[kc.kind]
		if kc.wantWrites && (total(w.writes) == 0 || total(wo.writes) == 0) {
			t.Errorf("%s: %s wrote nothing in a window (with %v, without %v): the row proves nothing", kc.kind, kc.writer, w.writes, wo.writes)
		}
		if kc.person {
			if w.validate != 1 || w.mutate != 0 {
				t.Errorf("%s: with matchConditions the webhooks reviewed mutate %d, validate %d; want 0, 1", kc.kind, w.mutate, w.validate)
			}
			continue
		}
		if w.mutate != 0 || w.validate != 0 || w.calls != 0 {
			t.Errorf("%s: with matchConditions the %s's writes reached apply-hygiene: mutate %d, validate %d reviews, %d API server calls; want 0",
				kc.kind, kc.writer, w.mutate, w.validate, w.calls)
		}
		// What the matchConditions spare, the server would only allow.
		if wo.acted != 0 {
			t.Errorf("%s: without matchConditions %d of the %s's writes were warned, denied, patched or failed; the matchConditions may only spare plain allows",
				kc.kind, wo.acted, kc.writer)
		}
		if wo.validate < wo.intercepted || wo.mutate < wo.intercepted {
			t.Errorf("%s: without matchConditions %d writes to intercepted resources gave mutate %d, validate %d reviews; want at least one each per write",
				kc.kind, wo.intercepted, wo.mutate, wo.validate)
		}
	}
}

// measure runs every kind's window in a namespace of its own.
func measure(t *testing.T, mode string) map[string]row {
	t.Helper()
	f := framework.New(t)
	r := run{f: f, operator: operatorClient(t, f), suffix: mode + "-" + strconv.FormatInt(time.Now().UnixNano()%100000, 10)}
	rows := map[string]row{}
	for _, kc := range kindCases {
		if kc.setup != nil {
			kc.setup(t, r)
			quiet(t, f)
		}
		before := read(t, f)
		kc.act(t, r)
		quiet(t, f)
		after := read(t, f)
		rows[kc.kind] = rowOf(kc, before, after)
		if kc.teardown != nil {
			kc.teardown(t, r)
			quiet(t, f)
		}
	}
	return rows
}

func rowOf(kc kindCase, before, after counts) row {
	rw := row{
		writes:   map[string]int{},
		mutate:   delta(before, after, func(c counts) float64 { return c.reviews("mutate") }),
		validate: delta(before, after, func(c counts) float64 { return c.reviews("validate") }),
		calls: delta(before, after, func(c counts) float64 { return c.calls(mutateName) }) +
			delta(before, after, func(c counts) float64 { return c.calls(validateName) }),
		acted: delta(before, after, counts.acted),
		excluded: delta(before, after, func(c counts) float64 { return c.excluded(mutateName) }) +
			delta(before, after, func(c counts) float64 { return c.excluded(validateName) }),
	}
	for _, res := range kc.counted {
		rw.writes[res] = delta(before, after, func(c counts) float64 { return c.writes(res) })
	}
	for _, res := range kc.intercepted {
		rw.intercepted += rw.writes[res]
	}
	return rw
}

// total sums the writes of a row.
func total(writes map[string]int) int {
	n := 0
	for _, w := range writes {
		n += w
	}
	return n
}

// quiet waits until no write and no review happens for two seconds (at
// most 20): controllers finish what a window started inside it. Leases do
// not count: leader election renews them every two seconds whatever a
// window did, which can keep two still seconds from coming.
func quiet(t *testing.T, f *framework.Framework) {
	t.Helper()
	activity := func(c counts) float64 {
		n := c.reviews("mutate") + c.reviews("validate")
		for series, v := range c.apiserver {
			if strings.HasPrefix(series, "apiserver_request_total{") && framework.Label(series, "resource") != "leases" {
				switch framework.Label(series, "verb") {
				case "PUT", "PATCH", "APPLY", "POST", "DELETE":
					n += v
				}
			}
		}
		return n
	}
	last, still := activity(read(t, f)), 0
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline) && still < 2; {
		time.Sleep(time.Second)
		now := activity(read(t, f))
		if now == last {
			still++
		} else {
			still, last = 0, now
		}
	}
}

// removeMatchConditions removes the matchConditions of both webhook
// configurations and waits until the API server calls the validating
// webhook for a controller's write again; the returned function puts them
// back and waits until it no longer does.
func removeMatchConditions(t *testing.T) func() {
	t.Helper()
	f := framework.New(t)
	ctx := t.Context()
	admission := f.Client.AdmissionregistrationV1()
	mutating, err := admission.MutatingWebhookConfigurations().Get(ctx, devenv.Release, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("reading the mutating webhook configuration: %v", err)
	}
	validating, err := admission.ValidatingWebhookConfigurations().Get(ctx, devenv.Release, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("reading the validating webhook configuration: %v", err)
	}
	savedMutating, savedValidating := mutating.Webhooks[0].MatchConditions, validating.Webhooks[0].MatchConditions
	setConditions := func(ctx context.Context, on bool) {
		m, err := admission.MutatingWebhookConfigurations().Get(ctx, devenv.Release, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("reading the mutating webhook configuration: %v", err)
		}
		v, err := admission.ValidatingWebhookConfigurations().Get(ctx, devenv.Release, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("reading the validating webhook configuration: %v", err)
		}
		m.Webhooks[0].MatchConditions, v.Webhooks[0].MatchConditions = nil, nil
		if on {
			m.Webhooks[0].MatchConditions, v.Webhooks[0].MatchConditions = savedMutating, savedValidating
		}
		if _, err := admission.MutatingWebhookConfigurations().Update(ctx, m, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("updating the mutating webhook configuration: %v", err)
		}
		if _, err := admission.ValidatingWebhookConfigurations().Update(ctx, v, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("updating the validating webhook configuration: %v", err)
		}
	}
	probe := probeWrite(t, f)
	setConditions(ctx, false)
	restored := false
	t.Cleanup(func() {
		if !restored {
			setConditions(context.Background(), true)
		}
	})
	framework.Eventually(t, 30*time.Second, "the API server calling the webhook without matchConditions", func(context.Context) (bool, error) {
		return probe() > 0, nil
	})
	return func() {
		setConditions(ctx, true)
		restored = true
		zeros := 0
		framework.Eventually(t, 30*time.Second, "the API server applying the matchConditions again", func(context.Context) (bool, error) {
			if probe() == 0 {
				zeros++
			} else {
				zeros = 0
			}
			return zeros >= 3, nil
		})
	}
}

// probeWrite returns a function that makes one controller-like write (a
// client-go update without field manager or last-applied, as the admin
// user) and returns how many validating reviews followed it.
func probeWrite(t *testing.T, f *framework.Framework) func() int {
	t.Helper()
	cms := f.Client.CoreV1().ConfigMaps(f.Namespace)
	cm, err := cms.Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "probe"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating the probe ConfigMap: %v", err)
	}
	i := 0
	return func() int {
		before := read(t, f).reviews("validate")
		i++
		cm.Data = map[string]string{"n": strconv.Itoa(i)}
		if cm, err = cms.Update(t.Context(), cm, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("updating the probe ConfigMap: %v", err)
		}
		time.Sleep(300 * time.Millisecond)
		return int(read(t, f).reviews("validate") - before)
	}
}

// logTable prints the per-kind table (docs/install.md has a copy).
func logTable(t *testing.T, with, without map[string]row) {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "\n| kind | writer | writes (with, without) | with matchConditions: reviews, API server calls, spared | without: reviews, API server calls |\n|---|---|---|---|---|\n")
	for _, kc := range kindCases {
		w, wo := with[kc.kind], without[kc.kind]
		fmt.Fprintf(&b, "| %s | %s | %s; %s | %d, %d, %d | %d, %d |\n", kc.kind, kc.writer, writesText(kc, w), writesText(kc, wo),
			w.mutate+w.validate, w.calls, w.excluded, wo.mutate+wo.validate, wo.calls)
	}
	t.Log(b.String())
}

func writesText(kc kindCase, rw row) string {
	var parts []string
	for _, res := range kc.counted {
		if n := rw.writes[res]; n > 0 {
			_, name, _ := strings.Cut(res, "/")
			parts = append(parts, fmt.Sprintf("%s %d", name, n))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}
