// Package k8s holds the Kubernetes recipe for a partitioned replay (see
// README.md): a split Job, a partition Job that reads what it wrote, and a
// merge Job. This test decodes each manifest strictly into the Job type of
// k8s.io/api and checks what the recipe depends on, without a cluster.
package k8s

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"

	"github.com/gpureplay/replay/shard"
)

const (
	splitFile     = "split-indexed-job.yaml"
	partitionFile = "replay-indexed-job.yaml"
	mergeFile     = "merge-job.yaml"
	readmeFile    = "README.md"

	claimName = "replay-data"
	mountPath = "/data"
)

// decodeJob converts one YAML document to JSON (rejecting duplicate keys)
// and decodes it into a batch/v1 Job, rejecting any field the Job type does
// not have. encoding/json matches names case-insensitively, which the API
// server does not, so the decoded Job is also encoded again and every key
// and value of the input must come back the same: a field spelt
// `completionmode` fails there.
func decodeJob(y []byte) (*batchv1.Job, error) {
	if n := len(documents(y)); n != 1 {
		return nil, fmt.Errorf("want one YAML document, got %d", n)
	}
	js, err := yaml.YAMLToJSONStrict(y)
	if err != nil {
		return nil, fmt.Errorf("YAML to JSON: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	var job batchv1.Job
	if err := dec.Decode(&job); err != nil {
		return nil, fmt.Errorf("decode batch/v1 Job: %w", err)
	}
	if err := dec.Decode(new(json.RawMessage)); err != io.EOF {
		return nil, fmt.Errorf("decode batch/v1 Job: data after the object (%v)", err)
	}
	again, err := json.Marshal(&job)
	if err != nil {
		return nil, err
	}
	var in, out any
	if err := json.Unmarshal(js, &in); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(again, &out); err != nil {
		return nil, err
	}
	if diffs := lost("", in, out); len(diffs) > 0 {
		return nil, fmt.Errorf("fields the API would not read as written: %s", strings.Join(diffs, "; "))
	}
	return &job, nil
}

// documents splits a YAML stream at its `---` lines and returns the
// documents that hold more than comments and blank lines.
func documents(y []byte) [][]byte {
	var docs [][]byte
	for _, d := range regexp.MustCompile(`(?m)^---[ \t]*(#.*)?$`).Split(string(y), -1) {
		for _, line := range strings.Split(d, "\n") {
			if t := strings.TrimSpace(line); t != "" && !strings.HasPrefix(t, "#") {
				docs = append(docs, []byte(d))
				break
			}
		}
	}
	return docs
}

// lost lists the keys and values of in that out does not have the same.
func lost(at string, in, out any) []string {
	switch in := in.(type) {
	case map[string]any:
		o, ok := out.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: %v became %v", at, in, out)}
		}
		var diffs []string
		for k, v := range in {
			ov, ok := o[k]
			if !ok {
				diffs = append(diffs, fmt.Sprintf("%s.%s: unknown field", at, k))
				continue
			}
			diffs = append(diffs, lost(at+"."+k, v, ov)...)
		}
		return diffs
	case []any:
		o, ok := out.([]any)
		if !ok || len(o) != len(in) {
			return []string{fmt.Sprintf("%s: %v became %v", at, in, out)}
		}
		var diffs []string
		for i := range in {
			diffs = append(diffs, lost(fmt.Sprintf("%s[%d]", at, i), in[i], o[i])...)
		}
		return diffs
	default:
		if !reflect.DeepEqual(in, out) {
			return []string{fmt.Sprintf("%s: %v became %v", at, in, out)}
		}
		return nil
	}
}

func readJob(t *testing.T, file string) *batchv1.Job {
	t.Helper()
	y, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	job, err := decodeJob(y)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return job
}

// problems collects what is wrong with the manifests.
type problems []string

func (p *problems) add(format string, args ...any) { *p = append(*p, fmt.Sprintf(format, args...)) }

// flagValue returns the value of flag -name in args, written `-name V`,
// `-name=V` or with two dashes.
func flagValue(args []string, name string) (string, bool) {
	for i, a := range args {
		a = strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-")
		if a == name && i+1 < len(args) && args[i] != a {
			return args[i+1], true
		}
		if v, ok := strings.CutPrefix(a, name+"="); ok && args[i] != a {
			return v, true
		}
	}
	return "", false
}

func hasFlag(args []string, name string) bool {
	return slices.Contains(args, "-"+name) || slices.Contains(args, "--"+name)
}

// onVolume reports whether p is an absolute path below the mount.
func onVolume(p string) bool {
	return path.IsAbs(p) && path.Clean(p) == p && strings.HasPrefix(p, mountPath+"/")
}

func envValue(c *corev1.Container, name string) (string, bool) {
	for _, e := range c.Env {
		if e.Name == name {
			return e.Value, e.ValueFrom == nil
		}
	}
	return "", false
}

// goMemLimit parses GOMEMLIMIT as the Go runtime does: a number of bytes
// with an optional B, KiB, MiB, GiB or TiB suffix.
func goMemLimit(s string) (int64, error) {
	units := []struct {
		suffix string
		shift  uint
	}{{"TiB", 40}, {"GiB", 30}, {"MiB", 20}, {"KiB", 10}, {"B", 0}}
	for _, u := range units {
		if n, ok := strings.CutSuffix(s, u.suffix); ok {
			v, err := strconv.ParseInt(n, 10, 64)
			if err != nil || v < 0 || v > (1<<62)>>u.shift {
				return 0, fmt.Errorf("GOMEMLIMIT %q: not a size", s)
			}
			return v << u.shift, nil
		}
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("GOMEMLIMIT %q: not a size", s)
	}
	return v, nil
}

// checkJob checks what both Jobs must get right, much as the API server's
// validation would, and returns the Job's one container (nil if it has not
// exactly one).
func checkJob(p *problems, job *batchv1.Job) *corev1.Container {
	name := job.Name
	if job.APIVersion != "batch/v1" || job.Kind != "Job" {
		p.add("%s: apiVersion/kind %s/%s, want batch/v1/Job", name, job.APIVersion, job.Kind)
	}
	for _, e := range validation.IsDNS1123Label(name) {
		p.add("job name %q: %s", name, e)
	}
	// The Job controller labels its pods batch.kubernetes.io/job-name=NAME.
	for _, e := range validation.IsValidLabelValue(name) {
		p.add("job name %q as a label value: %s", name, e)
	}
	if job.Namespace != "" {
		p.add("%s: namespace %q is set; leave it to kubectl -n", name, job.Namespace)
	}
	for _, labels := range []map[string]string{job.Labels, job.Spec.Template.Labels} {
		for k, v := range labels {
			for _, e := range validation.IsQualifiedName(k) {
				p.add("%s: label key %q: %s", name, k, e)
			}
			for _, e := range validation.IsValidLabelValue(v) {
				p.add("%s: label %s value %q: %s", name, k, v, e)
			}
		}
	}
	spec := &job.Spec
	if spec.Selector != nil || spec.ManualSelector != nil {
		p.add("%s: selector/manualSelector set; leave them to the Job controller", name)
	}
	if spec.Suspend != nil && *spec.Suspend {
		p.add("%s: suspended", name)
	}
	if spec.Parallelism != nil && spec.Completions != nil && *spec.Parallelism > *spec.Completions {
		p.add("%s: parallelism %d > completions %d", name, *spec.Parallelism, *spec.Completions)
	}
	pod := &spec.Template.Spec
	if pod.RestartPolicy != corev1.RestartPolicyNever {
		p.add("%s: restartPolicy %q, want Never", name, pod.RestartPolicy)
	}
	if spec.PodReplacementPolicy != nil {
		switch *spec.PodReplacementPolicy {
		case batchv1.Failed:
		case batchv1.TerminatingOrFailed:
			if spec.PodFailurePolicy != nil {
				p.add("%s: podReplacementPolicy must be Failed with a podFailurePolicy", name)
			}
		default:
			p.add("%s: podReplacementPolicy %q", name, *spec.PodReplacementPolicy)
		}
	}

	volumes := map[string]*corev1.Volume{}
	for i := range pod.Volumes {
		v := &pod.Volumes[i]
		for _, e := range validation.IsDNS1123Label(v.Name) {
			p.add("%s: volume name %q: %s", name, v.Name, e)
		}
		if volumes[v.Name] != nil {
			p.add("%s: volume %q twice", name, v.Name)
		}
		volumes[v.Name] = v
	}
	if len(pod.InitContainers) != 0 {
		p.add("%s: init containers", name)
	}
	if len(pod.Containers) != 1 {
		p.add("%s: %d containers, want 1", name, len(pod.Containers))
		return nil
	}
	c := &pod.Containers[0]
	for _, e := range validation.IsDNS1123Label(c.Name) {
		p.add("%s: container name %q: %s", name, c.Name, e)
	}
	if c.Image == "" || strings.ContainsAny(c.Image, " \t") {
		p.add("%s: image %q", name, c.Image)
	}
	if len(c.Command) == 0 || c.Command[0] == "" {
		p.add("%s: no command: the recipe must not depend on the image's entrypoint", name)
	}
	seen := map[string]bool{}
	for _, e := range c.Env {
		for _, msg := range validation.IsEnvVarName(e.Name) {
			p.add("%s: env %q: %s", name, e.Name, msg)
		}
		if seen[e.Name] {
			p.add("%s: env %s twice", name, e.Name)
		}
		seen[e.Name] = true
		// The Job controller sets JOB_COMPLETION_INDEX in each pod of an
		// Indexed Job; one set here would give every pod the same partition,
		// and so would SLURM_ARRAY_TASK_ID, which -partition auto prefers.
		if e.Name == "JOB_COMPLETION_INDEX" || strings.HasPrefix(e.Name, "SLURM_ARRAY_TASK_") {
			p.add("%s: sets %s, which would override the Job controller's index", name, e.Name)
		}
	}

	// Resources: requests and limits for CPU and memory, requests <= limits.
	for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		req, okReq := c.Resources.Requests[r]
		lim, okLim := c.Resources.Limits[r]
		if !okReq || !okLim || req.Sign() <= 0 {
			p.add("%s: %s needs a positive request and a limit", name, r)
			continue
		}
		if req.Cmp(lim) > 0 {
			p.add("%s: %s request %s > limit %s", name, r, req.String(), lim.String())
		}
	}
	if v, ok := envValue(c, "GOMEMLIMIT"); ok {
		limit, err := goMemLimit(v)
		mem := c.Resources.Limits[corev1.ResourceMemory]
		switch {
		case err != nil:
			p.add("%s: %v", name, err)
		case mem.IsZero() || limit >= mem.Value():
			p.add("%s: GOMEMLIMIT %s is not below limits.memory %s", name, v, mem.String())
		case limit < mem.Value()/2:
			p.add("%s: GOMEMLIMIT %s is less than half of limits.memory %s", name, v, mem.String())
		}
	}

	// The data volume: the claim, mounted at mountPath.
	var mounted bool
	for _, m := range c.VolumeMounts {
		v := volumes[m.Name]
		if v == nil {
			p.add("%s: volumeMount %q has no volume", name, m.Name)
			continue
		}
		if !path.IsAbs(m.MountPath) {
			p.add("%s: mountPath %q is not absolute", name, m.MountPath)
		}
		if m.MountPath != mountPath {
			continue
		}
		mounted = true
		switch pvc := v.PersistentVolumeClaim; {
		case pvc == nil:
			p.add("%s: %s is not a PersistentVolumeClaim", name, mountPath)
		case pvc.ClaimName != claimName:
			p.add("%s: claim %q at %s, want %q", name, pvc.ClaimName, mountPath, claimName)
		case pvc.ReadOnly || m.ReadOnly:
			p.add("%s: %s is read-only", name, mountPath)
		}
		for _, e := range validation.IsDNS1123Subdomain(claimOf(v)) {
			p.add("%s: claim name %q: %s", name, claimOf(v), e)
		}
	}
	if !mounted {
		p.add("%s: nothing mounted at %s", name, mountPath)
	}
	return c
}

func claimOf(v *corev1.Volume) string {
	if v.PersistentVolumeClaim == nil {
		return ""
	}
	return v.PersistentVolumeClaim.ClaimName
}

// claimAt returns the claim mounted at dir in the Job's container.
func claimAt(job *batchv1.Job, c *corev1.Container, dir string) string {
	for _, m := range c.VolumeMounts {
		if m.MountPath != dir {
			continue
		}
		for i := range job.Spec.Template.Spec.Volumes {
			if v := &job.Spec.Template.Spec.Volumes[i]; v.Name == m.Name {
				return claimOf(v)
			}
		}
	}
	return ""
}

// checkPartitions checks the Indexed Job and returns its output directory.
func checkPartitions(p *problems, job *batchv1.Job) (*corev1.Container, string) {
	c := checkJob(p, job)
	name, spec := job.Name, &job.Spec
	if spec.CompletionMode == nil || *spec.CompletionMode != batchv1.IndexedCompletion {
		p.add("%s: completionMode is not Indexed", name)
	}
	if spec.Completions == nil || spec.Parallelism == nil {
		p.add("%s: completions and parallelism must both be set", name)
		return c, ""
	}
	n := int(*spec.Completions)
	if n < 1 || n > shard.MaxPartitions {
		p.add("%s: completions %d outside 1..%d (shard.MaxPartitions)", name, n, shard.MaxPartitions)
	}
	if int(*spec.Parallelism) != n {
		p.add("%s: parallelism %d != completions %d", name, *spec.Parallelism, n)
	}
	// Pods of an Indexed Job are named NAME-INDEX-RANDOM, with hostname NAME-INDEX.
	if host := fmt.Sprintf("%s-%d", name, n-1); len(validation.IsDNS1123Label(host)) > 0 {
		p.add("%s: pod hostname %q is not a DNS-1123 label", name, host)
	}
	// A failed index must be retried.
	switch {
	case spec.BackoffLimitPerIndex != nil:
		if *spec.BackoffLimitPerIndex < 1 {
			p.add("%s: backoffLimitPerIndex %d: a failed index is not retried", name, *spec.BackoffLimitPerIndex)
		}
		if spec.BackoffLimit != nil && *spec.BackoffLimit < 1 {
			p.add("%s: backoffLimit %d: a failed index is not retried", name, *spec.BackoffLimit)
		}
		if m := spec.MaxFailedIndexes; m != nil && (*m < 0 || int(*m) > n) {
			p.add("%s: maxFailedIndexes %d outside 0..completions", name, *m)
		}
	case spec.BackoffLimit != nil:
		if *spec.BackoffLimit < 1 {
			p.add("%s: backoffLimit %d: a failed index is not retried", name, *spec.BackoffLimit)
		}
		if spec.MaxFailedIndexes != nil {
			p.add("%s: maxFailedIndexes needs backoffLimitPerIndex", name)
		}
	default:
		p.add("%s: neither backoffLimitPerIndex nor backoffLimit is set", name)
	}
	if c == nil {
		return nil, ""
	}

	v, ok := envValue(c, "REPLAY_PARTITIONS")
	if parts, err := strconv.Atoi(v); !ok || err != nil || parts != n {
		p.add("%s: env REPLAY_PARTITIONS %q (literal: %v), want completions %d", name, v, ok, n)
	}
	args := c.Args
	if mode, ok := flagValue(args, "partition"); !ok || mode != "auto" {
		p.add("%s: args %q lack -partition auto", name, args)
	}
	if parts, ok := flagValue(args, "partitions"); ok && parts != strconv.Itoa(n) {
		p.add("%s: -partitions %s != completions %d", name, parts, n)
	}
	if !hasFlag(args, "q") {
		p.add("%s: args %q lack -q", name, args)
	}
	if len(args) == 0 || strings.HasPrefix(args[0], "-") || !onVolume(args[0]) {
		p.add("%s: args %q: the trace (or split directory) must come first and be a path under %s", name, args, mountPath)
	}
	out, ok := flagValue(args, "o")
	if !ok || !onVolume(out) {
		p.add("%s: -o %q is not a directory under %s", name, out, mountPath)
	}
	return c, out
}

// checkSplit checks the split Job and returns its container, its output
// directory and its partition count.
func checkSplit(p *problems, job *batchv1.Job) (*corev1.Container, string, int) {
	c := checkJob(p, job)
	name, spec := job.Name, &job.Spec
	if spec.CompletionMode == nil || *spec.CompletionMode != batchv1.IndexedCompletion {
		p.add("%s: completionMode is not Indexed", name)
	}
	if spec.Completions == nil || spec.Parallelism == nil {
		p.add("%s: completions and parallelism must both be set", name)
		return c, "", 0
	}
	m := int(*spec.Completions)
	if m < 1 {
		p.add("%s: completions %d: no slice", name, m)
	}
	if int(*spec.Parallelism) != m {
		p.add("%s: parallelism %d != completions %d", name, *spec.Parallelism, m)
	}
	if (spec.BackoffLimitPerIndex == nil || *spec.BackoffLimitPerIndex < 1) && (spec.BackoffLimit == nil || *spec.BackoffLimit < 1) {
		p.add("%s: a failed slice is not retried", name)
	}
	if c == nil {
		return nil, "", 0
	}
	v, ok := envValue(c, "REPLAY_SLICES")
	if slices, err := strconv.Atoi(v); !ok || err != nil || slices != m {
		p.add("%s: env REPLAY_SLICES %q (literal: %v), want completions %d", name, v, ok, m)
	}
	args := c.Args
	if len(args) < 2 || args[0] != "split" || strings.HasPrefix(args[1], "-") || !onVolume(args[1]) {
		p.add("%s: args %q do not start with split TRACE, the trace a path under %s", name, args, mountPath)
	}
	if mode, ok := flagValue(args, "slice"); !ok || mode != "auto" {
		p.add("%s: args %q lack -slice auto", name, args)
	}
	if sl, ok := flagValue(args, "slices"); ok && sl != strconv.Itoa(m) {
		p.add("%s: -slices %s != completions %d", name, sl, m)
	}
	n := 0
	if v, ok := flagValue(args, "partitions"); ok {
		n, _ = strconv.Atoi(v)
	} else if v, ok := envValue(c, "REPLAY_PARTITIONS"); ok {
		n, _ = strconv.Atoi(v)
	}
	if n < 1 || n > shard.MaxPartitions {
		p.add("%s: the partition count (-partitions or REPLAY_PARTITIONS) is %d, want 1..%d", name, n, shard.MaxPartitions)
	}
	if !hasFlag(args, "q") {
		p.add("%s: args %q lack -q", name, args)
	}
	out, ok := flagValue(args, "o")
	if !ok || !onVolume(out) {
		p.add("%s: -o %q is not a directory under %s", name, out, mountPath)
	}
	return c, out, n
}

// checkPipeline checks that the partition Job replays what the split Job
// writes: its directory, its partition count, the same image, command and
// claim, and output directories that do not overlap.
func checkPipeline(split, part *batchv1.Job) problems {
	var p problems
	sc, dir, n := checkSplit(&p, split)
	pc := &part.Spec.Template.Spec.Containers[0]
	if split.Name == part.Name {
		p.add("both Jobs are named %q", part.Name)
	}
	if sc == nil || len(part.Spec.Template.Spec.Containers) != 1 {
		return p
	}
	if len(pc.Args) == 0 || pc.Args[0] != dir {
		p.add("%s reads %q, but %s writes the split directory %q", part.Name, pc.Args, split.Name, dir)
	}
	if part.Spec.Completions != nil && int(*part.Spec.Completions) != n {
		p.add("%s splits into %d partitions, but %s has %d completions", split.Name, n, part.Name, *part.Spec.Completions)
	}
	if out, ok := flagValue(pc.Args, "o"); ok && dir != "" && (out == dir || strings.HasPrefix(out, dir+"/") || strings.HasPrefix(dir, out+"/")) {
		p.add("%s: -o %q overlaps the split directory %q", part.Name, out, dir)
	}
	// The split combines when the replays write no per-lane table, and
	// such slices replay only with those tables: both name the same.
	if st, pt := tablesOf(sc.Args), tablesOf(pc.Args); st != pt {
		p.add("%s splits for -tables %s, but %s replays -tables %s", split.Name, st, part.Name, pt)
	}
	if sc.Image != pc.Image {
		p.add("images differ: %q and %q", sc.Image, pc.Image)
	}
	if !slices.Equal(sc.Command, pc.Command) {
		p.add("commands differ: %q and %q", sc.Command, pc.Command)
	}
	if s, q := claimAt(split, sc, mountPath), claimAt(part, pc, mountPath); s == "" || s != q {
		p.add("claims at %s differ: %q and %q", mountPath, s, q)
	}
	return p
}

// tablesOf is the -tables of args, "(default)" without one.
func tablesOf(args []string) string {
	if v, ok := flagValue(args, "tables"); ok {
		return v
	}
	return "(default)"
}

// checkMerge checks the merge Job, which reads from dir.
func checkMerge(p *problems, job *batchv1.Job, dir string) *corev1.Container {
	c := checkJob(p, job)
	name, spec := job.Name, &job.Spec
	if spec.CompletionMode != nil && *spec.CompletionMode != batchv1.NonIndexedCompletion {
		p.add("%s: completionMode %s, want NonIndexed", name, *spec.CompletionMode)
	}
	if spec.Completions == nil || *spec.Completions != 1 {
		p.add("%s: completions must be 1", name)
	}
	if spec.Parallelism != nil && *spec.Parallelism != 1 {
		p.add("%s: parallelism %d, want 1", name, *spec.Parallelism)
	}
	if spec.BackoffLimitPerIndex != nil || spec.MaxFailedIndexes != nil {
		p.add("%s: backoffLimitPerIndex/maxFailedIndexes need an Indexed Job", name)
	}
	if c == nil {
		return nil
	}
	args := c.Args
	if len(args) < 2 || args[0] != "merge" {
		p.add("%s: args %q do not start with merge DIR", name, args)
		return c
	}
	if args[1] != dir {
		p.add("%s: merges %q, but the partitions are written to %q", name, args[1], dir)
	}
	out, ok := flagValue(args, "o")
	switch {
	case !ok || !onVolume(out):
		p.add("%s: -o %q is not a directory under %s", name, out, mountPath)
	case out == dir || strings.HasPrefix(out, dir+"/") || strings.HasPrefix(dir, out+"/"):
		p.add("%s: -o %q overlaps the partitions' directory %q", name, out, dir)
	}
	if !hasFlag(args, "q") {
		p.add("%s: args %q lack -q", name, args)
	}
	return c
}

// check checks both Jobs and how they fit together.
func check(part, merge *batchv1.Job) problems {
	var p problems
	pc, dir := checkPartitions(&p, part)
	mc := checkMerge(&p, merge, dir)
	if part.Name == merge.Name {
		p.add("both Jobs are named %q", part.Name)
	}
	if pc == nil || mc == nil {
		return p
	}
	if pc.Image != mc.Image {
		p.add("images differ: %q and %q", pc.Image, mc.Image)
	}
	if !slices.Equal(pc.Command, mc.Command) {
		p.add("commands differ: %q and %q", pc.Command, mc.Command)
	}
	pClaim, mClaim := claimAt(part, pc, mountPath), claimAt(merge, mc, mountPath)
	if pClaim == "" || pClaim != mClaim {
		p.add("claims at %s differ: %q and %q", mountPath, pClaim, mClaim)
	}
	return p
}

func TestManifests(t *testing.T) {
	split, part, merge := readJob(t, splitFile), readJob(t, partitionFile), readJob(t, mergeFile)
	for _, msg := range check(part, merge) {
		t.Error(msg)
	}
	for _, msg := range checkPipeline(split, part) {
		t.Error(msg)
	}
	if split.Name == merge.Name {
		t.Errorf("the split and merge Jobs are both named %q", split.Name)
	}
	if t.Failed() {
		return
	}
	// The values the README's commands and prose name.
	readme, err := os.ReadFile(readmeFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"job/" + split.Name, "job/" + part.Name, "job/" + merge.Name, splitFile, partitionFile, mergeFile, "REPLAY_SLICES",
		claimName, "ReadWriteMany", "REPLAY_PARTITIONS", part.Spec.Template.Spec.Containers[0].Image,
		"hive_partitioning", "/data/out/part=*/memory.parquet",
	} {
		if !bytes.Contains(readme, []byte(want)) {
			t.Errorf("%s does not mention %q", readmeFile, want)
		}
	}
}

// TestStrictDecodeFails proves that decodeJob rejects what the API server
// would not read as written.
func TestStrictDecodeFails(t *testing.T) {
	good, err := os.ReadFile(partitionFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, old, new, want string
	}{
		// A misspelt field: DisallowUnknownFields.
		{"misspelt field", "completionMode:", "completionsMode:", `unknown field "completionsMode"`},
		{"misspelt nested field", "claimName:", "claimNames:", `unknown field "claimNames"`},
		// The right letters in the wrong case: encoding/json accepts it, the
		// API server does not; the round trip catches it.
		{"field in the wrong case", "completionMode:", "completionmode:", ".spec.completionmode: unknown field"},
		// A duplicate key: YAMLToJSONStrict.
		{"duplicate key", "  parallelism: 3", "  parallelism: 3\n  parallelism: 4", `"parallelism" already set`},
		// A second document would otherwise be ignored.
		{"second document", "apiVersion: batch/v1\n", "apiVersion: batch/v1\n---\nkind: Job\n", "want one YAML document, got 2"},
		// A value of the wrong type.
		{"string for an int", "completions: 3", `completions: "3"`, "cannot unmarshal string"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := bytes.Replace(good, []byte(tc.old), []byte(tc.new), 1)
			if bytes.Equal(bad, good) {
				t.Fatalf("%q is not in %s", tc.old, partitionFile)
			}
			_, err := decodeJob(bad)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("decodeJob: got error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestChecksFail proves that each check rejects a manifest that gets its
// value wrong.
func TestChecksFail(t *testing.T) {
	part, merge := readJob(t, partitionFile), readJob(t, mergeFile)
	pc := func(j *batchv1.Job) *corev1.Container { return &j.Spec.Template.Spec.Containers[0] }
	setEnv := func(c *corev1.Container, name, value string) {
		for i := range c.Env {
			if c.Env[i].Name == name {
				c.Env[i].Value = value
				return
			}
		}
		c.Env = append(c.Env, corev1.EnvVar{Name: name, Value: value})
	}
	setArg := func(c *corev1.Container, old, new string) {
		i := slices.Index(c.Args, old)
		if i < 0 {
			t.Fatalf("arg %q not in %q", old, c.Args)
		}
		c.Args[i] = new
	}
	i32 := func(v int32) *int32 { return &v }
	for _, tc := range []struct {
		name   string
		mutate func(part, merge *batchv1.Job)
		want   string
	}{
		{"apiVersion", func(p, _ *batchv1.Job) { p.APIVersion = "batch/v1beta1" }, "apiVersion/kind"},
		{"kind", func(_, m *batchv1.Job) { m.Kind = "CronJob" }, "apiVersion/kind"},
		{"not Indexed", func(p, _ *batchv1.Job) { p.Spec.CompletionMode = nil }, "completionMode is not Indexed"},
		{"merge Indexed", func(_, m *batchv1.Job) { x := batchv1.IndexedCompletion; m.Spec.CompletionMode = &x }, "want NonIndexed"},
		{"completions", func(p, _ *batchv1.Job) { p.Spec.Completions = i32(4) }, "parallelism 3 != completions 4"},
		{"parallelism", func(p, _ *batchv1.Job) { p.Spec.Parallelism = i32(2) }, "parallelism 2 != completions 3"},
		{"REPLAY_PARTITIONS", func(p, _ *batchv1.Job) { setEnv(pc(p), "REPLAY_PARTITIONS", "4") }, `env REPLAY_PARTITIONS "4"`},
		{"REPLAY_PARTITIONS missing", func(p, _ *batchv1.Job) { pc(p).Env = nil }, `env REPLAY_PARTITIONS ""`},
		{"-partitions disagrees", func(p, _ *batchv1.Job) { c := pc(p); c.Args = append(c.Args, "-partitions", "4") }, "-partitions 4"},
		{"JOB_COMPLETION_INDEX set", func(p, _ *batchv1.Job) { setEnv(pc(p), "JOB_COMPLETION_INDEX", "0") }, "sets JOB_COMPLETION_INDEX"},
		{"SLURM_ARRAY_TASK_ID set", func(p, _ *batchv1.Job) { setEnv(pc(p), "SLURM_ARRAY_TASK_ID", "0") }, "sets SLURM_ARRAY_TASK_ID"},
		{"too many partitions", func(p, _ *batchv1.Job) {
			p.Spec.Completions, p.Spec.Parallelism = i32(shard.MaxPartitions+1), i32(shard.MaxPartitions+1)
		}, "outside 1.."},
		{"no retry", func(p, _ *batchv1.Job) { p.Spec.BackoffLimitPerIndex = i32(0) }, "not retried"},
		{"no retry limit", func(p, _ *batchv1.Job) { p.Spec.BackoffLimitPerIndex, p.Spec.BackoffLimit = nil, nil }, "neither backoffLimitPerIndex"},
		{"restartPolicy", func(p, _ *batchv1.Job) { p.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure }, `replay-partitions: restartPolicy "OnFailure"`},
		{"merge restartPolicy", func(_, m *batchv1.Job) { m.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure }, `replay-merge: restartPolicy "OnFailure"`},
		{"-partition", func(p, _ *batchv1.Job) { setArg(pc(p), "auto", "0") }, "lack -partition auto"},
		{"-q", func(p, _ *batchv1.Job) { setArg(pc(p), "-q", "-v") }, "lack -q"},
		{"trace path", func(p, _ *batchv1.Job) { setArg(pc(p), "/data/split", "/tmp/split") }, "must come first and be a path under /data"},
		{"-o elsewhere", func(p, _ *batchv1.Job) { setArg(pc(p), "/data/out", "/data/out2") }, `merges "/data/out", but the partitions are written to "/data/out2"`},
		{"-o off the volume", func(p, _ *batchv1.Job) { setArg(pc(p), "/data/out", "/out") }, "is not a directory under /data"},
		{"merge command", func(_, m *batchv1.Job) { setArg(pc(m), "merge", "marge") }, "do not start with merge"},
		{"merge -o", func(_, m *batchv1.Job) { setArg(pc(m), "/data/merged", "/data/out/merged") }, "overlaps"},
		{"merge completions", func(_, m *batchv1.Job) { m.Spec.Completions = i32(2) }, "completions must be 1"},
		{"image", func(_, m *batchv1.Job) { pc(m).Image = "ghcr.io/gpureplay/replay:v2" }, "images differ"},
		{"command", func(_, m *batchv1.Job) { pc(m).Command = []string{"/bin/replay"} }, "commands differ"},
		{"no command", func(p, m *batchv1.Job) { pc(p).Command, pc(m).Command = nil, nil }, "no command"},
		{"claim", func(_, m *batchv1.Job) {
			m.Spec.Template.Spec.Volumes[0].PersistentVolumeClaim.ClaimName = "replay-out"
		}, `claim "replay-out"`},
		{"claim name", func(p, _ *batchv1.Job) {
			p.Spec.Template.Spec.Volumes[0].PersistentVolumeClaim.ClaimName = "Replay_Data"
		}, `claim name "Replay_Data"`},
		{"mount path", func(_, m *batchv1.Job) { pc(m).VolumeMounts[0].MountPath = "/mnt" }, "nothing mounted at /data"},
		{"mount without volume", func(p, _ *batchv1.Job) { pc(p).VolumeMounts[0].Name = "scratch" }, "has no volume"},
		{"read-only", func(p, _ *batchv1.Job) { pc(p).VolumeMounts[0].ReadOnly = true }, "read-only"},
		{"job name", func(p, _ *batchv1.Job) { p.Name = "Replay_Partitions" }, `job name "Replay_Partitions"`},
		{"same names", func(p, m *batchv1.Job) { m.Name = p.Name }, "both Jobs are named"},
		{"container name", func(_, m *batchv1.Job) { pc(m).Name = "replay.merge" }, `container name "replay.merge"`},
		{"label", func(p, _ *batchv1.Job) { p.Labels["app.kubernetes.io/name"] = "-replay" }, `label app.kubernetes.io/name value "-replay"`},
		{"env name", func(p, _ *batchv1.Job) { setEnv(pc(p), "1BAD", "x") }, `env "1BAD"`},
		{"two containers", func(p, _ *batchv1.Job) {
			s := &p.Spec.Template.Spec
			s.Containers = append(s.Containers, s.Containers[0])
		}, "2 containers"},
		{"request over limit", func(p, _ *batchv1.Job) {
			pc(p).Resources.Requests[corev1.ResourceMemory] = resource.MustParse("8Gi")
		}, "memory request 8Gi > limit 4Gi"},
		{"no CPU limit", func(_, m *batchv1.Job) { delete(pc(m).Resources.Limits, corev1.ResourceCPU) }, "cpu needs"},
		{"GOMEMLIMIT over limit", func(p, _ *batchv1.Job) { setEnv(pc(p), "GOMEMLIMIT", "5GiB") }, "not below limits.memory"},
		{"GOMEMLIMIT unparsable", func(p, _ *batchv1.Job) { setEnv(pc(p), "GOMEMLIMIT", "3.5Gi") }, "not a size"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, m := part.DeepCopy(), merge.DeepCopy()
			tc.mutate(p, m)
			got := check(p, m)
			for _, msg := range got {
				if strings.Contains(msg, tc.want) {
					return
				}
			}
			t.Errorf("no problem mentions %q; got %q", tc.want, got)
		})
	}
}

// TestPipelineChecksFail proves that each check of the split Job, and of
// how the partition Job reads what it writes, rejects a manifest that gets
// its value wrong.
func TestPipelineChecksFail(t *testing.T) {
	split, part := readJob(t, splitFile), readJob(t, partitionFile)
	pc := func(j *batchv1.Job) *corev1.Container { return &j.Spec.Template.Spec.Containers[0] }
	setEnv := func(c *corev1.Container, name, value string) {
		for i := range c.Env {
			if c.Env[i].Name == name {
				c.Env[i].Value = value
				return
			}
		}
		c.Env = append(c.Env, corev1.EnvVar{Name: name, Value: value})
	}
	setArg := func(c *corev1.Container, old, new string) {
		i := slices.Index(c.Args, old)
		if i < 0 {
			t.Fatalf("arg %q not in %q", old, c.Args)
		}
		c.Args[i] = new
	}
	i32 := func(v int32) *int32 { return &v }
	for _, tc := range []struct {
		name   string
		mutate func(split, part *batchv1.Job)
		want   string
	}{
		{"not Indexed", func(s, _ *batchv1.Job) { s.Spec.CompletionMode = nil }, "replay-split: completionMode is not Indexed"},
		{"parallelism", func(s, _ *batchv1.Job) { s.Spec.Parallelism = i32(1) }, "parallelism 1 != completions 2"},
		{"REPLAY_SLICES", func(s, _ *batchv1.Job) { setEnv(pc(s), "REPLAY_SLICES", "3") }, `env REPLAY_SLICES "3"`},
		{"-slices disagrees", func(s, _ *batchv1.Job) { c := pc(s); c.Args = append(c.Args, "-slices", "5") }, "-slices 5 != completions 2"},
		{"REPLAY_PARTITIONS", func(s, _ *batchv1.Job) { setEnv(pc(s), "REPLAY_PARTITIONS", "4") }, "splits into 4 partitions, but replay-partitions has 3"},
		{"no partition count", func(s, _ *batchv1.Job) { pc(s).Env = pc(s).Env[:1] }, "the partition count"},
		{"-slice", func(s, _ *batchv1.Job) { setArg(pc(s), "auto", "0/2") }, "lack -slice auto"},
		{"not split", func(s, _ *batchv1.Job) { setArg(pc(s), "split", "merge") }, "do not start with split TRACE"},
		{"trace off the volume", func(s, _ *batchv1.Job) { setArg(pc(s), "/data/trace.zst", "/trace.zst") }, "do not start with split TRACE"},
		{"-q", func(s, _ *batchv1.Job) { setArg(pc(s), "-q", "-v") }, "lack -q"},
		{"split -o", func(s, _ *batchv1.Job) { setArg(pc(s), "/data/split", "/data/split2") }, `replay-partitions reads`},
		{"split -o off the volume", func(s, _ *batchv1.Job) { setArg(pc(s), "/data/split", "/split") }, "is not a directory under /data"},
		{"partition -o overlaps", func(s, p *batchv1.Job) { setArg(pc(p), "/data/out", "/data/split/out") }, "overlaps the split directory"},
		{"no retry", func(s, _ *batchv1.Job) { s.Spec.BackoffLimitPerIndex, s.Spec.BackoffLimit = i32(0), nil }, "a failed slice is not retried"},
		{"image", func(s, _ *batchv1.Job) { pc(s).Image = "ghcr.io/gpureplay/replay:v2" }, "images differ"},
		{"command", func(s, _ *batchv1.Job) { pc(s).Command = []string{"/bin/replay"} }, "commands differ"},
		{"claim", func(s, _ *batchv1.Job) {
			s.Spec.Template.Spec.Volumes[0].PersistentVolumeClaim.ClaimName = "replay-split"
		}, `claim "replay-split"`},
		{"same names", func(s, p *batchv1.Job) { s.Name = p.Name }, "both Jobs are named"},
		{"tables", func(_, p *batchv1.Job) {
			setArg(pc(p), "memory,results,instructions,ops,addresses", "memory,instructions,ops")
		}, "replays -tables memory,instructions,ops"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, p := split.DeepCopy(), part.DeepCopy()
			tc.mutate(s, p)
			got := checkPipeline(s, p)
			for _, msg := range got {
				if strings.Contains(msg, tc.want) {
					return
				}
			}
			t.Errorf("no problem mentions %q; got %q", tc.want, got)
		})
	}
}

func TestGoMemLimit(t *testing.T) {
	for s, want := range map[string]int64{"3584MiB": 3584 << 20, "4GiB": 4 << 30, "1024": 1024, "10B": 10, "2KiB": 2048} {
		if got, err := goMemLimit(s); err != nil || got != want {
			t.Errorf("goMemLimit(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	for _, s := range []string{"", "3.5GiB", "4Gi", "-1", "MiB"} {
		if _, err := goMemLimit(s); err == nil {
			t.Errorf("goMemLimit(%q): no error", s)
		}
	}
}

func TestFlagValue(t *testing.T) {
	args := []string{"t.zst", "-partition", "auto", "--o=/d", "-q"}
	if v, ok := flagValue(args, "partition"); !ok || v != "auto" {
		t.Errorf("partition = %q, %v", v, ok)
	}
	if v, ok := flagValue(args, "o"); !ok || v != "/d" {
		t.Errorf("o = %q, %v", v, ok)
	}
	if _, ok := flagValue(args, "auto"); ok {
		t.Error("a value taken for a flag")
	}
	if !hasFlag(args, "q") || hasFlag(args, "partitions") {
		t.Error("hasFlag")
	}
}
