package statement

// AppendISO appends d as String formats it (YYYY-MM-DD) without fmt's
// allocations; renderers write many dates. Dates outside the four-digit year
// range, which String pads or signs differently, go through String.
func (d Date) AppendISO(b []byte) []byte {
	if d.Year < 0 || d.Year > 9999 || d.Month < 0 || d.Month > 99 || d.Day < 0 || d.Day > 99 {
		return append(b, d.String()...)
	}
	y, m := d.Year, int(d.Month)
	return append(b,
		byte('0'+y/1000), byte('0'+y/100%10), byte('0'+y/10%10), byte('0'+y%10), '-',
		byte('0'+m/10), byte('0'+m%10), '-',
		byte('0'+d.Day/10), byte('0'+d.Day%10))
}
