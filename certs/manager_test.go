package certs

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
)

func TestEnsure(t *testing.T) {
	opts := testOptions(t)
	hosts := opts.hosts()
	// expiring was issued so long ago that it is within RenewBefore of
	// its end, yet still valid.
	expiring := mustGenerate(t, hosts, testNow.Add(-opts.Validity+opts.RenewBefore-time.Hour), opts.Validity)
	valid := mustGenerate(t, hosts, testNow.Add(-time.Hour), opts.Validity)
	otherService := mustGenerate(t, []string{"other.apply-hygiene.svc"}, testNow, opts.Validity)
	expired := mustGenerate(t, hosts, testNow.Add(-2*opts.Validity), opts.Validity)
	mismatched := valid
	mismatched.key = expiring.key

	tests := map[string]struct {
		secret *corev1.Secret
		// wantBundle is the number of CAs in the bundle afterwards.
		wantBundle int
		// wantSame is whether the secret's certificate is unchanged.
		wantSame bool
		// wantPreviousCA is the CA bundle that must follow the new CA.
		wantPreviousCA []byte
	}{
		"a missing secret is created with a new CA": {
			wantBundle: 1,
		},
		"a valid secret is kept": {
			secret: secretWith(valid), wantBundle: 1, wantSame: true,
		},
		"a secret expiring within RenewBefore stages a new CA and keeps serving its certificate": {
			secret: secretWith(expiring), wantBundle: 2, wantSame: true, wantPreviousCA: expiring.caBundle,
		},
		"a secret for another service is regenerated": {
			secret: secretWith(otherService), wantBundle: 2, wantPreviousCA: otherService.caBundle,
		},
		"an expired secret is regenerated without its dead CA": {
			secret: secretWith(expired), wantBundle: 1,
		},
		"a secret whose key does not match its certificate is regenerated": {
			secret: secretWith(mismatched), wantBundle: 2, wantPreviousCA: mismatched.caBundle,
		},
		"a secret with garbage is regenerated": {
			secret: secretWith(material{caBundle: []byte("x"), cert: []byte("y"), key: []byte("z")}), wantBundle: 1,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			objs := webhookConfigs(testConfig)
			if tc.secret != nil {
				objs = append(objs, tc.secret.DeepCopy())
			}
			client := fake.NewClientset(objs...)
			opts := testOptions(t)
			m, s := ensured(t, client, opts)
			cas := mustCerts(t, s.secret.Data[CAKey])
			if len(cas) != tc.wantBundle {
				t.Errorf("the CA bundle has %d certificates, want %d", len(cas), tc.wantBundle)
			}
			if tc.secret != nil {
				same := bytes.Equal(s.secret.Data[CertKey], tc.secret.Data[CertKey])
				if same != tc.wantSame {
					t.Errorf("certificate unchanged = %v, want %v", same, tc.wantSame)
				}
			}
			if tc.wantPreviousCA != nil && len(cas) == 2 {
				prev := mustCerts(t, tc.wantPreviousCA)[0]
				if !cas[1].Equal(prev) {
					t.Errorf("the second CA of the bundle is not the previous CA")
				}
			}
			if err := m.Ensure(t.Context()); err != nil {
				t.Fatalf("second Ensure: %v", err)
			}
			again := readState(t, client, opts.CertDir)
			if again.secret.ResourceVersion != s.secret.ResourceVersion || !bytes.Equal(again.cert, s.cert) || !bytes.Equal(again.key, s.key) {
				t.Errorf("a second Ensure changed the secret or the files")
			}
			if diff := cmp.Diff(s.mutating, again.mutating); diff != "" {
				t.Errorf("a second Ensure changed the mutating caBundles (-first +second):\n%s", diff)
			}
		})
	}
}

func TestEnsureLosesCreateRace(t *testing.T) {
	opts := testOptions(t)
	winner := mustGenerate(t, opts.hosts(), testNow, opts.Validity)
	client := fake.NewClientset(webhookConfigs(testConfig)...)
	creates := 0
	client.PrependReactor("create", "secrets", func(clienttesting.Action) (bool, runtime.Object, error) {
		creates++
		// Another replica creates the secret first.
		if err := client.Tracker().Add(secretWith(winner)); err != nil {
			t.Errorf("adding the winner's secret: %v", err)
		}
		return true, nil, apierrors.NewAlreadyExists(schema.GroupResource{Resource: "secrets"}, testSecret)
	})
	_, s := ensured(t, client, opts)
	if creates != 1 || !bytes.Equal(s.cert, winner.cert) {
		t.Errorf("after %d creates the replica serves its own certificate, want the winner's", creates)
	}
}

func TestEnsureLosesUpdateRace(t *testing.T) {
	opts := testOptions(t)
	old := mustGenerate(t, opts.hosts(), testNow.Add(-opts.Validity+time.Hour), opts.Validity)
	winner := mustGenerate(t, opts.hosts(), testNow, opts.Validity)
	objs := append(webhookConfigs(testConfig), secretWith(old))
	client := fake.NewClientset(objs...)
	updates := 0
	client.PrependReactor("update", "secrets", func(clienttesting.Action) (bool, runtime.Object, error) {
		updates++
		// Another replica rotated the secret first.
		if err := client.Tracker().Update(corev1.SchemeGroupVersion.WithResource("secrets"), secretWith(winner), testNamespace); err != nil {
			t.Errorf("storing the winner's secret: %v", err)
		}
		return true, nil, apierrors.NewConflict(schema.GroupResource{Resource: "secrets"}, testSecret, errors.New("the object has been modified"))
	})
	_, s := ensured(t, client, opts)
	if updates != 1 || !bytes.Equal(s.cert, winner.cert) {
		t.Errorf("after %d updates the replica serves its own certificate, want the winner's", updates)
	}
}

func TestEnsureWithoutWebhookConfigurations(t *testing.T) {
	opts := testOptions(t)
	client := fake.NewClientset()
	m, err := NewManager(client, opts)
	if err != nil {
		t.Fatalf("NewManager: %v", err)
	}
	err = m.Ensure(t.Context())
	if !apierrors.IsNotFound(err) {
		t.Fatalf("Ensure = %v, want a NotFound error", err)
	}
	first := readState(t, client, opts.CertDir)
	if len(first.cert) == 0 {
		t.Fatalf("the first round wrote no certificate; the webhook server could not start")
	}

	// A rotation the API server cannot be told about must not replace a
	// working certificate.
	later := testNow.Add(opts.Validity - opts.RenewBefore + time.Hour)
	opts.Now = func() time.Time { return later }
	m, err = NewManager(client, opts)
	if err != nil {
		t.Fatalf("NewManager: %v", err)
	}
	if err := m.Ensure(t.Context()); !apierrors.IsNotFound(err) {
		t.Fatalf("Ensure = %v, want a NotFound error", err)
	}
	second := readState(t, client, opts.CertDir)
	if bytes.Equal(second.secret.Data[CAKey], first.secret.Data[CAKey]) || len(second.secret.Data[NextCertKey]) == 0 {
		t.Errorf("no renewal was staged in the secret")
	}
	if !bytes.Equal(second.cert, first.cert) {
		t.Errorf("the certificate file was replaced although its CA could not be injected")
	}
}

func TestEnsureNeverLogsKeyMaterial(t *testing.T) {
	opts := testOptions(t)
	expiring := mustGenerate(t, opts.hosts(), testNow.Add(-opts.Validity+time.Hour), opts.Validity)
	var logs strings.Builder
	log := funcr.New(func(prefix, args string) { logs.WriteString(prefix + args + "\n") }, funcr.Options{Verbosity: 10})
	ctx := logr.NewContext(t.Context(), log)
	client := fake.NewClientset(append(webhookConfigs(testConfig), secretWith(expiring))...)
	now := testNow
	opts.Now = func() time.Time { return now }
	m, err := NewManager(client, opts)
	if err != nil {
		t.Fatalf("NewManager: %v", err)
	}
	if err := m.Ensure(ctx); err != nil {
		t.Fatalf("Ensure: %v", err)
	}
	staged := readState(t, client, opts.CertDir)
	now = now.Add(m.opts.PublishDelay)
	if err := m.Ensure(ctx); err != nil {
		t.Fatalf("Ensure after the publish delay: %v", err)
	}
	s := readState(t, client, opts.CertDir)
	for _, msg := range []string{"staging a new CA and certificate", "serving the staged certificate"} {
		if !strings.Contains(logs.String(), msg) {
			t.Errorf("the logs lack %q:\n%s", msg, logs.String())
		}
	}
	for _, secret := range [][]byte{s.key, expiring.key, staged.secret.Data[NextKeyKey], []byte("PRIVATE KEY")} {
		if strings.Contains(logs.String(), strings.TrimSpace(string(secret))) {
			t.Fatalf("the logs contain key material")
		}
	}
}

func TestNewManagerValidatesOptions(t *testing.T) {
	tests := map[string]struct {
		change  func(*Options)
		wantErr string
	}{
		"complete options are accepted": {change: func(*Options) {}},
		"a missing secret name is named": {
			change: func(o *Options) { o.SecretName = "" }, wantErr: "SecretName is required",
		},
		"RenewBefore must be shorter than Validity": {
			change: func(o *Options) { o.RenewBefore = o.Validity }, wantErr: "must be less than Validity",
		},
		"the old certificate must outlive the publish delay and a check": {
			change:  func(o *Options) { o.PublishDelay = o.RenewBefore - o.CheckInterval },
			wantErr: "PublishDelay (719h0m0s) plus CheckInterval (1h0m0s) must be less than RenewBefore (720h0m0s)",
		},
		"every replica must pick up a promotion before the next renewal": {
			change:  func(o *Options) { o.Validity, o.RenewBefore, o.PublishDelay = 10*time.Hour, 8*time.Hour, time.Hour },
			wantErr: "and than Validity minus RenewBefore (2h0m0s)",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			opts := testOptions(t)
			opts.CheckInterval = time.Hour
			tc.change(&opts)
			_, err := NewManager(fake.NewClientset(), opts)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if tc.wantErr == "" && got != "" || !strings.Contains(got, tc.wantErr) {
				t.Errorf("NewManager error = %q, want it to contain %q", got, tc.wantErr)
			}
		})
	}
}

func TestStartKeepsCheckingUntilCancelled(t *testing.T) {
	opts := testOptions(t)
	opts.CheckInterval = 10 * time.Millisecond
	client := fake.NewClientset(webhookConfigs(testConfig)...)
	gets := make(chan struct{}, 100)
	client.PrependReactor("get", "secrets", func(clienttesting.Action) (bool, runtime.Object, error) {
		select {
		case gets <- struct{}{}:
		default:
		}
		return false, nil, nil
	})
	m, err := NewManager(client, opts)
	if err != nil {
		t.Fatalf("NewManager: %v", err)
	}
	if m.NeedLeaderElection() {
		t.Errorf("NeedLeaderElection = true, want every replica to run it")
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- m.Start(ctx) }()
	for range 3 {
		select {
		case <-gets:
		case <-time.After(10 * time.Second):
			t.Fatalf("Start did not check the secret periodically")
		}
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Start = %v, want nil after cancellation", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("Start did not return after cancellation")
	}
	assertConsistent(t, readState(t, client, opts.CertDir), opts, testNow)
}

func TestDefaultPublishDelay(t *testing.T) {
	tests := map[string]struct {
		validity, renewBefore, checkInterval time.Duration
		want                                 time.Duration
	}{
		"a year's certificate waits a minute": {validity: DefaultValidity, want: time.Minute},
		"a 40 s certificate renewed 30 s before expiry waits a quarter of that": {
			validity: 40 * time.Second, renewBefore: 30 * time.Second, checkInterval: time.Second, want: 7500 * time.Millisecond,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			opts := testOptions(t)
			opts.Validity, opts.RenewBefore, opts.CheckInterval = tc.validity, tc.renewBefore, tc.checkInterval
			m, err := NewManager(fake.NewClientset(), opts)
			if err != nil {
				t.Fatalf("NewManager: %v", err)
			}
			if m.opts.PublishDelay != tc.want {
				t.Errorf("PublishDelay = %s, want %s", m.opts.PublishDelay, tc.want)
			}
		})
	}
}
