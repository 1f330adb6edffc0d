package policy

import (
	"encoding/json"
	"fmt"
)

// plainInput is Input without its JSON methods.
type plainInput Input

// MarshalJSON encodes in as the policy input document, with each orphan's
// RemovePatches entry as its removePatch.
func (in Input) MarshalJSON() ([]byte, error) {
	raw, err := json.Marshal(plainInput(in))
	if err != nil || len(in.RemovePatches) == 0 || in.Analysis == nil || len(in.Analysis.Orphans) == 0 {
		return raw, err
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("adding remove patches: %w", err)
	}
	var analysis map[string]json.RawMessage
	if err := json.Unmarshal(doc["analysis"], &analysis); err != nil {
		return nil, fmt.Errorf("adding remove patches: %w", err)
	}
	var orphans []map[string]json.RawMessage
	if err := json.Unmarshal(analysis["orphans"], &orphans); err != nil {
		return nil, fmt.Errorf("adding remove patches: %w", err)
	}
	for _, o := range orphans {
		var path string
		_ = json.Unmarshal(o["path"], &path) // merge.Path encodes as a string
		patch, ok := in.RemovePatches[path]
		if _, has := o["removePatch"]; ok && !has {
			o["removePatch"], _ = json.Marshal(patch) // encoding a string cannot fail
		}
	}
	if analysis["orphans"], err = json.Marshal(orphans); err != nil {
		return nil, fmt.Errorf("adding remove patches: %w", err)
	}
	if doc["analysis"], err = json.Marshal(analysis); err != nil {
		return nil, fmt.Errorf("adding remove patches: %w", err)
	}
	return json.Marshal(doc)
}

// UnmarshalJSON decodes the policy input document, collecting each
// orphan's removePatch into RemovePatches.
func (in *Input) UnmarshalJSON(data []byte) error {
	var plain plainInput
	if err := json.Unmarshal(data, &plain); err != nil {
		return err
	}
	var patches struct {
		Analysis *struct {
			Orphans []struct {
				Path        string `json:"path"`
				RemovePatch string `json:"removePatch"`
			} `json:"orphans"`
		} `json:"analysis"`
	}
	if err := json.Unmarshal(data, &patches); err != nil {
		return err
	}
	*in = Input(plain)
	if patches.Analysis == nil {
		return nil
	}
	for _, o := range patches.Analysis.Orphans {
		if o.RemovePatch != "" {
			if in.RemovePatches == nil {
				in.RemovePatches = map[string]string{}
			}
			in.RemovePatches[o.Path] = o.RemovePatch
		}
	}
	return nil
}
