package tpcc

import (
	"database/sql/driver"
	"fmt"
	"math"
	"strconv"
	"time"
)

// money is an exact amount in hundredths (cents). §1.3.1 requires exact numeric types for
// W_YTD, D_YTD, C_BALANCE, H_AMOUNT, OL_AMOUNT, I_PRICE and the like, and §1.4.12 that
// arithmetic keeps their precision, so amounts never pass through float64 on the client.
// It is sent as decimal text ("-10.00"), which every engine accepts for DECIMAL columns.
type money int64

// rate is an exact fraction in ten-thousandths: W_TAX, D_TAX, C_DISCOUNT (numeric(4,4),
// §1.3.1).
type rate int64

const (
	moneyScale = 2
	rateScale  = 4
)

// AppendText implements encoding.TextAppender ("123.45"); bulk loaders use it.
func (m money) AppendText(b []byte) ([]byte, error) { return appendFixed(b, int64(m), moneyScale), nil }

// Value implements driver.Valuer.
func (m money) Value() (driver.Value, error) {
	return string(appendFixed(nil, int64(m), moneyScale)), nil
}

// Scan implements sql.Scanner.
func (m *money) Scan(src any) error {
	v, err := scanFixed(src, moneyScale)
	*m = money(v)
	return err
}

func (m money) String() string { return string(appendFixed(nil, int64(m), moneyScale)) }

// arg is m as a statement's argument: its decimal text, which every engine's driver passes
// for a DECIMAL parameter as it is. Passed as a driver.Valuer, pgx first tries to encode
// the Valuer's text as binary NUMERIC, fails (formatting an error), parses it and encodes
// it again: 6 % of a TPC-C client's CPU; a string it sends as text.
func (m money) arg() string { return m.String() }

// AppendText implements encoding.TextAppender ("0.1234").
func (r rate) AppendText(b []byte) ([]byte, error) { return appendFixed(b, int64(r), rateScale), nil }

// Value implements driver.Valuer.
func (r rate) Value() (driver.Value, error) {
	return string(appendFixed(nil, int64(r), rateScale)), nil
}

// Scan implements sql.Scanner.
func (r *rate) Scan(src any) error {
	v, err := scanFixed(src, rateScale)
	*r = rate(v)
	return err
}

var pow10 = [...]int64{1, 10, 100, 1000, 10000, 100000}

// appendFixed appends v / 10^scale in plain decimal notation with exactly scale digits.
func appendFixed(b []byte, v int64, scale int) []byte {
	u := uint64(v)
	if v < 0 {
		b = append(b, '-')
		u = uint64(-v)
	}
	p := uint64(pow10[scale])
	b = strconv.AppendUint(b, u/p, 10)
	b = append(b, '.')
	frac := u % p
	for d := p / 10; d > 0; d /= 10 {
		b = append(b, byte('0'+frac/d%10))
	}
	return b
}

// scanFixed reads a DECIMAL column as an integer count of 10^-scale units. Drivers hand
// decimals over as text (pgx, go-sql-driver/mysql); integers are accepted as is. A float64
// (from drivers that convert DECIMAL to float) is rounded to the nearest unit: exact for
// the magnitudes TPC-C stores (below 2^53 units).
func scanFixed(src any, scale int) (int64, error) {
	switch x := src.(type) {
	case string:
		return parseFixed(x, scale)
	case []byte:
		return parseFixed(string(x), scale)
	case int64:
		return x * pow10[scale], nil
	case float64:
		return int64(math.Round(x * float64(pow10[scale]))), nil
	case nil:
		return 0, fmt.Errorf("tpcc: NULL where a decimal is required")
	}
	return 0, fmt.Errorf("tpcc: cannot scan %T as a decimal", src)
}

// parseFixed parses "[-]digits[.digits]" into units of 10^-scale. Extra fraction digits
// must be zeros: TPC-C columns never hold more precision than their type declares.
func parseFixed(s string, scale int) (int64, error) {
	orig := s
	neg := false
	if len(s) > 0 && (s[0] == '-' || s[0] == '+') {
		neg = s[0] == '-'
		s = s[1:]
	}
	var v int64
	digits, frac := 0, -1
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '.' && frac < 0:
			frac = 0
		case c >= '0' && c <= '9':
			digits++
			if frac >= 0 {
				if frac >= scale {
					if c != '0' {
						return 0, fmt.Errorf("tpcc: decimal %q has more than %d fraction digits", orig, scale)
					}
					continue
				}
				frac++
			}
			if v > (math.MaxInt64-9)/10 {
				return 0, fmt.Errorf("tpcc: decimal %q out of range", orig)
			}
			v = v*10 + int64(c-'0')
		default:
			return 0, fmt.Errorf("tpcc: invalid decimal %q", orig)
		}
	}
	if digits == 0 {
		return 0, fmt.Errorf("tpcc: invalid decimal %q", orig)
	}
	if frac < 0 {
		frac = 0
	}
	v *= pow10[scale-frac]
	if neg {
		v = -v
	}
	return v, nil
}

// displayTime scans a date-and-time column whose value is only displayed, never computed
// with (C_SINCE, O_ENTRY_D, OL_DELIVERY_D): drivers that parse timestamps hand over a
// time.Time, others (go-sql-driver/mysql without parseTime) text. NULL leaves Valid false.
type displayTime struct {
	Time  time.Time
	Text  string
	Valid bool
}

// Scan implements sql.Scanner.
func (d *displayTime) Scan(src any) error {
	switch x := src.(type) {
	case nil:
		*d = displayTime{}
	case time.Time:
		*d = displayTime{Time: x, Valid: true}
	case []byte:
		*d = displayTime{Text: string(x), Valid: true}
	case string:
		*d = displayTime{Text: x, Valid: true}
	default:
		return fmt.Errorf("tpcc: cannot scan %T as a date and time", src)
	}
	return nil
}
