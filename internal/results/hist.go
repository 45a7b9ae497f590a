package results

import (
	"errors"
	"fmt"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// EncodeHist encodes h in the HdrHistogram V2 compressed format, as base64 text: the form
// TxSummary.Hist and WaitHist hold. It does not modify h; like any read of a Histogram it
// must not race with writes to h.
func EncodeHist(h *hdrhistogram.Histogram) (string, error) {
	if h == nil {
		return "", errors.New("results: encode histogram: nil histogram")
	}
	b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		return "", fmt.Errorf("results: encode histogram: %w", err)
	}
	return string(b), nil
}

// DecodeHist decodes a histogram encoded by EncodeHist (or any HdrHistogram V2 compressed
// base64 encoding) into a new Histogram with the same geometry and counts, so percentiles
// can be recomputed and histograms merged. An empty string is an error.
func DecodeHist(s string) (*hdrhistogram.Histogram, error) {
	if s == "" {
		return nil, errors.New("results: decode histogram: empty string")
	}
	h, err := hdrhistogram.Decode([]byte(s))
	if err != nil {
		return nil, fmt.Errorf("results: decode histogram: %w", err)
	}
	return h, nil
}
