package columnar

import (
	"encoding/json"
	"fmt"
)

// MetaOptions is the metadata key of what a replay ran with: RunOptions
// as JSON, in every table file (Parquet key-value metadata, Arrow IPC
// schema metadata), so that a reader of the tables (replay report) can
// tell, for instance, an order_sensitive column left false by a replay
// without -explore from one that -explore found all false.
const MetaOptions = "replay.options"

// RunOptions are the options of the replay that wrote a directory's
// tables: the flags of `replay TRACE` that change what the tables hold,
// the trace's name and the program's version. Its JSON (field names as
// tagged, in this order) is MetaOptions's value; docs/OUTPUT.md lists it.
type RunOptions struct {
	Trace         string `json:"trace"`            // the trace file's name (its base name), "stdin" or "demo"
	Version       string `json:"version"`          // replay's module version, "(devel)" for a build in a work tree
	Commit        string `json:"commit,omitempty"` // the VCS revision it was built from, "+dirty" when modified
	Order         string `json:"order"`            // -order: lane, reverse or random
	Seed          uint64 `json:"seed"`             // -seed: of -order random and of -explore-orders
	Interleave    int    `json:"interleave"`       // -interleave W (0: none)
	Explore       bool   `json:"explore"`          // -explore: addresses.order_sensitive filled
	ExploreOrders int    `json:"explore_orders"`   // -explore-orders K (0: none, no orders table)
	Races         bool   `json:"races"`            // -races
	ClusterSize   int64  `json:"cluster_size"`     // -cluster-size, for -races' .cluster scope
	Strict        bool   `json:"strict"`           // -strict
	// Partition is -partition i/n, "" for a whole replay (and for
	// replay merge's tables, which are the whole replay's).
	Partition string `json:"partition,omitempty"`
	// Tables are the tables the writer wrote, in docs/OUTPUT.md's order:
	// New fills them from its selection (WithTables).
	Tables []string `json:"tables"`
}

// WithRunOptions records r, as JSON under MetaOptions, in every table
// file, its Tables those the Writer writes.
func WithRunOptions(r RunOptions) Option {
	return func(o *options) error {
		o.run = &r
		return nil
	}
}

// ParseRunOptions reads MetaOptions's value.
func ParseRunOptions(s string) (RunOptions, error) {
	var r RunOptions
	if err := json.Unmarshal([]byte(s), &r); err != nil {
		return r, fmt.Errorf("columnar: %s metadata %q: %w", MetaOptions, s, err)
	}
	return r, nil
}

// runMeta is the MetaOptions pair New adds to the files' metadata, with
// the tables o selects.
func (o *options) runMeta() ([2]string, error) {
	r := *o.run
	r.Tables = nil
	for id := range numTables {
		if o.tables[id] {
			r.Tables = append(r.Tables, specs[id].name)
		}
	}
	b, err := json.Marshal(r)
	if err != nil {
		return [2]string{}, err
	}
	return [2]string{MetaOptions, string(b)}, nil
}
