package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// answer is what the tests read of an AdmissionReview response.
type answer struct {
	UID      string
	Allowed  bool
	Code     int32
	Message  string
	Warnings []string
}

// The four servers of -peer start, answer the default reviews, and a short
// side-by-side run of them prints its tables.
func TestReferences(t *testing.T) {
	reviews, err := readReviews("../../webhook/testdata/bench/typical-[ae][pd]*.json")
	if err != nil {
		t.Fatal(err)
	}
	refs, err := startReferences(t.Context(), reviews, true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := refs.stop(); err != nil {
			t.Error(err)
		}
	})
	testAnswers(t, refs, reviews)
	t.Run("a short side-by-side run of the typical edit prints its tables", func(t *testing.T) {
		edit := slices.DeleteFunc(slices.Clone(reviews), func(r review) bool { return r.name != "typical-edit.json" })
		testSideBySide(t, refs, edit)
	})
}

// All four allow the typical apply; the peer and apply-hygiene deny the
// typical edit (kubectl edit changed an image that last-applied has).
func testAnswers(t *testing.T, refs *references, reviews []review) {
	client, err := newClient(refs.caPEM, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer client.CloseIdleConnections()
	const applyUID, editUID = "99a53d73-b60a-4973-9b46-8dc47b3e9bfa", "c48bd616-60e9-4e17-9305-10681b5d247d"
	allowApply := answer{UID: applyUID, Allowed: true}
	allowEdit := answer{UID: editUID, Allowed: true}
	tests := map[string]struct {
		server, review string
		want           answer
		// message is a part of the denial's message.
		message string
	}{
		"the uid reader allows the apply": {server: uidOnlyName, review: "typical-apply.json", want: allowApply},
		"the uid reader allows the edit":  {server: uidOnlyName, review: "typical-edit.json", want: allowEdit},
		"the floor allows the apply":      {server: floorName, review: "typical-apply.json", want: allowApply},
		"the floor allows the edit":       {server: floorName, review: "typical-edit.json", want: allowEdit},
		"the peer allows the apply":       {server: peerName, review: "typical-apply.json", want: allowApply},
		"apply-hygiene allows the apply":  {server: hygieneName, review: "typical-apply.json", want: answer{UID: applyUID, Allowed: true, Code: 200}},
		"the peer denies the edit of an image": {server: peerName, review: "typical-edit.json", want: answer{UID: editUID, Code: 403},
			message: `Deployment deployment-edit/web: spec.template.spec.containers.0.image is managed by kubectl apply but "kubectl-edit" changed it`},
		"apply-hygiene denies the edit of an image": {server: hygieneName, review: "typical-edit.json", want: answer{UID: editUID, Code: 403},
			message: "[imperative-edit] Deployment deployment-edit/web: this write by apply-hygiene-admin (field manager kubectl-edit) changes fields that last-applied owns: spec.template.spec.containers[name=nginx].image"},
	}
	urls := map[string]string{}
	for _, s := range refs.servers {
		urls[s.name] = s.url
	}
	byName := map[string]review{}
	for _, r := range reviews {
		byName[r.name] = r
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			// The review as captured, and its third variant, answered alike.
			vs, err := variants(byName[tc.review], 3)
			if err != nil {
				t.Fatal(err)
			}
			for i, body := range [][]byte{byName[tc.review].body, vs[2].body} {
				want := tc.want
				if i == 1 {
					want.UID += "-2"
				}
				got := post(t, client, urls[tc.server], body)
				if !strings.Contains(got.Message, tc.message) {
					t.Errorf("message %q does not contain %q", got.Message, tc.message)
				}
				got.Message = ""
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("answer (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// One short side-by-side run prints a row for each server, the fixed-rate
// phase and the ratios.
func testSideBySide(t *testing.T, refs *references, reviews []review) {
	var out strings.Builder
	o := sideOptions{workers: 2, round: 100 * time.Millisecond, rounds: 2, fixedRate: 50, fixedDuration: 200 * time.Millisecond, warmup: 4, variants: 4}
	if _, err := sideBySide(t.Context(), &out, refs, reviews, o); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| " + uidOnlyName + " | ", "| " + floorName + " | ", "| " + peerName + " | ", "| " + hygieneName + " | ",
		"| " + hygieneName + " | 10 of 10 | ", "apply-hygiene throughput ÷ peer: ", "apply-hygiene p99 at 50/s ÷ peer's: "} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the output has no %q:\n%s", want, out.String())
		}
	}
}

// post sends body to url and decodes the answer.
func post(t *testing.T, client *http.Client, url string, body []byte) answer {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST %s: HTTP %d", url, resp.StatusCode)
	}
	var review struct {
		Response struct {
			UID     string `json:"uid"`
			Allowed bool   `json:"allowed"`
			Status  *struct {
				Code    int32  `json:"code"`
				Message string `json:"message"`
			} `json:"status"`
			Warnings []string `json:"warnings"`
		} `json:"response"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&review); err != nil {
		t.Fatalf("decoding the answer of %s: %v", url, err)
	}
	r := review.Response
	got := answer{UID: r.UID, Allowed: r.Allowed, Warnings: r.Warnings}
	if r.Status != nil {
		got.Code, got.Message = r.Status.Code, r.Status.Message
	}
	return got
}
