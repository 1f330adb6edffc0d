package framework

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestShadowMismatchesSumsBothWebhooks(t *testing.T) {
	tests := map[string]struct {
		metrics string
		want    float64
	}{
		"no mismatch counted yet": {
			metrics: "apply_hygiene_review_errors_total{reason=\"timeout\",webhook=\"validate\"} 4\n",
			want:    0,
		},
		"mismatches in both webhooks": {
			metrics: "# HELP apply_hygiene_review_errors_total Reviews that failed.\n" +
				"apply_hygiene_review_errors_total{reason=\"shadow_mismatch\",webhook=\"mutate\"} 1\n" +
				"apply_hygiene_review_errors_total{reason=\"shadow_mismatch\",webhook=\"validate\"} 2\n" +
				"apply_hygiene_review_errors_total{reason=\"internal\",webhook=\"validate\"} 7\n",
			want: 3,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				_, _ = w.Write([]byte(tc.metrics))
			}))
			defer srv.Close()
			got, err := shadowMismatches(t.Context(), srv.URL)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("shadowMismatches = %v, want %v", got, tc.want)
			}
		})
	}
}
