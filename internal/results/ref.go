package results

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrNotRunID is the error of ParseID and ParseIDs for text that is not a run id.
var ErrNotRunID = errors.New("not a run id")

// ParseID reads a run's id as users write it on a command line ("12"): a whole number,
// nothing around it. Its error wraps ErrNotRunID.
func ParseID(s string) (int64, error) {
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q: %w", s, ErrNotRunID)
	}
	return id, nil
}

// ParseIDs reads run ids joined by commas ("12,13,14"; spaces around each are ignored), as
// the commands that take several runs in one argument write them. Its error wraps
// ErrNotRunID and names the first part that is no id.
func ParseIDs(s string) ([]int64, error) {
	var ids []int64
	for _, p := range strings.Split(s, ",") {
		id, err := ParseID(strings.TrimSpace(p))
		if err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, nil
}
