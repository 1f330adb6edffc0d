package main

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/yaml"
)

// krewPlugin is krew's Plugin (krew.googlecontainertools.github.com/v1alpha2),
// the fields krew-index uses; decoding is strict, so any other is an error.
type krewPlugin struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Version          string `json:"version"`
		Homepage         string `json:"homepage"`
		ShortDescription string `json:"shortDescription"`
		Description      string `json:"description"`
		Caveats          string `json:"caveats,omitempty"`
		Platforms        []struct {
			Selector struct {
				MatchLabels map[string]string `json:"matchLabels"`
			} `json:"selector"`
			URI    string `json:"uri"`
			SHA256 string `json:"sha256"`
			Bin    string `json:"bin"`
			Files  []struct {
				From string `json:"from"`
				To   string `json:"to"`
			} `json:"files,omitempty"`
		} `json:"platforms"`
	} `json:"spec"`
}

const krewManifest = "../../plugins/hygiene.yaml"

func TestKrewManifest(t *testing.T) {
	data, err := os.ReadFile(krewManifest)
	if err != nil {
		t.Fatal(err)
	}
	var p krewPlugin
	if err := yaml.UnmarshalStrict(data, &p); err != nil {
		t.Fatalf("decoding %s strictly: %v", krewManifest, err)
	}
	if p.APIVersion != "krew.googlecontainertools.github.com/v1alpha2" || p.Kind != "Plugin" {
		t.Errorf("apiVersion %q, kind %q; want krew.googlecontainertools.github.com/v1alpha2 Plugin", p.APIVersion, p.Kind)
	}
	// kubectl runs the binary kubectl-NAME as `kubectl NAME`.
	binary := NewCmdHygiene(genericiooptions.NewTestIOStreamsDiscard()).Name()
	if want := strings.TrimPrefix(binary, "kubectl-"); p.Metadata.Name != want {
		t.Errorf("metadata.name %q, want %q (the binary is %s)", p.Metadata.Name, want, binary)
	}
	if p.Spec.Version != version || !regexp.MustCompile(`^v\d+\.\d+\.\d+$`).MatchString(p.Spec.Version) {
		t.Errorf("spec.version %q, want the CLI's version %q (vMAJOR.MINOR.PATCH)", p.Spec.Version, version)
	}
	for field, v := range map[string]string{"homepage": p.Spec.Homepage, "shortDescription": p.Spec.ShortDescription, "description": p.Spec.Description} {
		if strings.TrimSpace(v) == "" {
			t.Errorf("spec.%s is empty", field)
		}
	}
	var got []string
	for i, pl := range p.Spec.Platforms {
		goos, arch := pl.Selector.MatchLabels["os"], pl.Selector.MatchLabels["arch"]
		got = append(got, goos+"/"+arch)
		if len(pl.Selector.MatchLabels) != 2 {
			t.Errorf("platform %d: matchLabels %v, want os and arch only", i, pl.Selector.MatchLabels)
		}
		bin, ext := binary, ".tar.gz"
		if goos == "windows" {
			bin, ext = binary+".exe", ".zip"
		}
		if pl.Bin != bin {
			t.Errorf("platform %s/%s: bin %q, want %q", goos, arch, pl.Bin, bin)
		}
		uri := fmt.Sprintf("https://github.com/apply-hygiene/apply-hygiene/releases/download/%s/%s_%s_%s_%s%s", version, binary, version, goos, arch, ext)
		if pl.URI != uri {
			t.Errorf("platform %s/%s: uri %q, want %q", goos, arch, pl.URI, uri)
		}
		if !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(pl.SHA256) {
			t.Errorf("platform %s/%s: sha256 %q is not 64 hex digits (the release fills in the archive's)", goos, arch, pl.SHA256)
		}
	}
	slices.Sort(got)
	want := []string{"darwin/amd64", "darwin/arm64", "linux/amd64", "linux/arm64", "windows/amd64", "windows/arm64"}
	if !slices.Equal(got, want) {
		t.Errorf("platforms %v, want %v", got, want)
	}
}

func TestVersion(t *testing.T) {
	stdout, stderr, code := runCmd(t, "version")
	if code != exitOK || stdout != version+"\n" || stderr != "" {
		t.Errorf("exit %d, stdout %q, stderr %q; want %q", code, stdout, stderr, version)
	}
}

// kubectl_complete-hygiene runs `kubectl-hygiene __complete WORDS…`:
// `kubectl hygiene <TAB>` offers the commands.
func TestCompleteCommands(t *testing.T) {
	stdout, _, code := runCmd(t, "__complete", "")
	if code != exitOK {
		t.Fatalf("exit %d", code)
	}
	var names []string
	for _, l := range strings.Split(stdout, "\n") {
		if name, _, _ := strings.Cut(l, "\t"); name != "" && !strings.HasPrefix(name, ":") {
			names = append(names, name)
		}
	}
	for _, want := range []string{"diff", "explain", "audit", "test"} {
		if !slices.Contains(names, want) {
			t.Errorf("completions %q do not offer %q", names, want)
		}
	}
	stdout, _, _ = runCmd(t, "__complete", "diff", "--kus")
	if !strings.Contains(stdout, "--kustomize") {
		t.Errorf("completing diff --kus: %q, want --kustomize", stdout)
	}
}
