package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

// maxReviewBytes bounds a request body, as controller-runtime's webhooks do.
const maxReviewBytes = 7 << 20

// uidOnly answers allowed after reading only request.uid: the cost of
// HTTPS and of scanning the body, nothing else.
func uidOnly(w http.ResponseWriter, r *http.Request) {
	body, ok := readBody(w, r)
	if !ok {
		return
	}
	var review struct {
		Request struct {
			UID types.UID `json:"uid"`
		} `json:"request"`
	}
	if err := json.Unmarshal(body, &review); err != nil {
		http.Error(w, fmt.Sprintf("decoding the review: %v", err), http.StatusBadRequest)
		return
	}
	writeAnswer(w, admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: true})
}

// floor answers allowed after decoding the whole review, its objects into
// unstructured maps: what any webhook that looks at the object pays.
func floor(w http.ResponseWriter, r *http.Request) {
	body, ok := readBody(w, r)
	if !ok {
		return
	}
	var review admissionv1.AdmissionReview
	if err := json.Unmarshal(body, &review); err != nil || review.Request == nil {
		http.Error(w, fmt.Sprintf("decoding the review: %v", err), http.StatusBadRequest)
		return
	}
	for _, raw := range [][]byte{review.Request.Object.Raw, review.Request.OldObject.Raw} {
		if len(raw) == 0 {
			continue
		}
		var obj unstructured.Unstructured
		if err := obj.UnmarshalJSON(raw); err != nil {
			http.Error(w, fmt.Sprintf("decoding an object: %v", err), http.StatusBadRequest)
			return
		}
	}
	writeAnswer(w, admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: true})
}

func readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxReviewBytes))
	if err != nil {
		http.Error(w, fmt.Sprintf("reading the review: %v", err), http.StatusRequestEntityTooLarge)
		return nil, false
	}
	return body, true
}

// writeAnswer writes resp as an admission/v1 AdmissionReview.
func writeAnswer(w http.ResponseWriter, resp admissionv1.AdmissionResponse) {
	out, err := json.Marshal(admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Response: &resp,
	})
	if err != nil {
		http.Error(w, "encoding the answer", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(out)
}

// serveFloor serves floor over HTTPS on o.ServeFloor until ctx ends: the
// floor of -installed, a process of its own.
func serveFloor(ctx context.Context, o Options) error {
	if _, err := loopbackURL("https://" + o.ServeFloor); err != nil {
		return err
	}
	cert, err := tls.LoadX509KeyPair(o.TLSCert, o.TLSKey)
	if err != nil {
		return fmt.Errorf("reading -tls-cert and -tls-key: %w", err)
	}
	cfg := &tls.Config{NextProtos: []string{"http/1.1"}, MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}}
	l, err := tls.Listen("tcp", o.ServeFloor, cfg)
	if err != nil {
		return fmt.Errorf("listening: %w", err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(floor), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	if err := srv.Serve(l); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
