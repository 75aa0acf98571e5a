package export

import (
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// This file ports markdown-it 14's link normalisation (normalizeLink,
// normalizeLinkText and validateLink in lib/index.mjs), with the parts of
// mdurl 2 (parse, format, encode, decode) and punycode.js 2 (toASCII,
// toUnicode) they use (all MIT, see NOTICE). Lengths that the JavaScript
// measures in UTF-16 code units are measured the same way here.

// normalizeLink is markdown-it's normalizeLink: the URL parsed, its host
// name (of an http, https or mailto URL, or one without a protocol) turned
// into punycode, and the result percent-encoded.
func normalizeLink(url string) string {
	u := parseURL(url)
	if u.hostname != "" && (u.protocol == "" || recodeHostname(u.protocol)) {
		if h, ok := punycodeToASCII(u.hostname); ok {
			u.hostname = h
		}
	}
	return encodeURL(u.format())
}

// normalizeLinkText is markdown-it's normalizeLinkText: the text shown for
// an autolink, with a punycode host name decoded and percent-escapes
// decoded (except those of reserved characters and of "%").
func normalizeLinkText(url string) string {
	u := parseURL(url)
	if u.hostname != "" && (u.protocol == "" || recodeHostname(u.protocol)) {
		if h, ok := punycodeToUnicode(u.hostname); ok {
			u.hostname = h
		}
	}
	return decodeURL(u.format(), ";/?:@&=+$,#%")
}

func recodeHostname(protocol string) bool {
	return protocol == "http:" || protocol == "https:" || protocol == "mailto:"
}

// validateLink is markdown-it's validateLink: false for javascript:,
// vbscript:, file: and data: URLs, except data: URLs of gif, png, jpeg
// and webp images.
func validateLink(url string) bool {
	s := strings.ToLower(jsTrim(url))
	for _, bad := range []string{"vbscript:", "javascript:", "file:", "data:"} {
		if strings.HasPrefix(s, bad) {
			for _, good := range []string{"data:image/gif;", "data:image/png;", "data:image/jpeg;", "data:image/webp;"} {
				if strings.HasPrefix(s, good) {
					return true
				}
			}
			return false
		}
	}
	return true
}

// jsTrim is JavaScript's String.prototype.trim.
func jsTrim(s string) string { return strings.TrimFunc(s, isJSSpace) }

// utf16Len returns the length of s in UTF-16 code units.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// mdURL is mdurl's Url; an empty string stands for null.
type mdURL struct {
	protocol, auth, port, hostname, hash, search, pathname string
	slashes                                                bool
}

func isProtocolChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '+' || c == '-'
}

func isHostnamePartChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '+' || c == '_' || c == '-'
}

// hostnamePart reports whether part matches ^[+a-z0-9A-Z_-]{0,63}$.
func hostnamePart(part string) bool {
	if len(part) > 63 {
		return false
	}
	for i := 0; i < len(part); i++ {
		if !isHostnamePartChar(part[i]) {
			return false
		}
	}
	return true
}

// indexAny returns the smallest index in s of one of the bytes in chars,
// or -1.
func indexAny(s, chars string) int { return strings.IndexAny(s, chars) }

// parseURL is mdurl's parse(url, true).
func parseURL(url string) mdURL {
	var u mdURL
	rest := jsTrim(url)
	proto := ""
	n := 0
	for n < len(rest) && isProtocolChar(rest[n]) {
		n++
	}
	if n > 0 && n < len(rest) && rest[n] == ':' {
		proto = rest[:n+1]
		u.protocol = proto
		rest = rest[n+1:]
	}
	hostless := proto == "javascript:"
	slashes := strings.HasPrefix(rest, "//")
	if slashes && !hostless {
		rest = rest[2:]
		u.slashes = true
	}
	slashed := false
	switch proto {
	case "http:", "https:", "ftp:", "gopher:", "file:":
		slashed = true
	}
	if !hostless && (slashes || (proto != "" && !slashed)) {
		hostEnd := indexAny(rest, "/?#")
		var atSign int
		if hostEnd == -1 {
			atSign = strings.LastIndexByte(rest, '@')
		} else {
			atSign = strings.LastIndexByte(rest[:hostEnd], '@')
		}
		if atSign != -1 {
			u.auth = rest[:atSign]
			rest = rest[atSign+1:]
		}
		hostEnd = indexAny(rest, "%/?;#'{}|\\^`<>\" \r\n\t")
		if hostEnd == -1 {
			hostEnd = len(rest)
		}
		if hostEnd > 0 && rest[hostEnd-1] == ':' {
			hostEnd--
		}
		host := rest[:hostEnd]
		rest = rest[hostEnd:]
		u.parseHost(host)
		ipv6 := len(u.hostname) > 0 && u.hostname[0] == '[' && u.hostname[len(u.hostname)-1] == ']'
		if !ipv6 {
			parts := strings.Split(u.hostname, ".")
			for i, part := range parts {
				if part == "" || hostnamePart(part) {
					continue
				}
				if ascii := hostnameXed(part); hostnamePart(ascii) {
					continue
				}
				valid := append([]string(nil), parts[:i]...)
				notHost := append([]string(nil), parts[i+1:]...)
				k := 0
				for k < len(part) && k < 63 && isHostnamePartChar(part[k]) {
					k++
				}
				if !strings.ContainsAny(part[k:], "\n\r\u2028\u2029") {
					valid = append(valid, part[:k])
					notHost = append([]string{part[k:]}, notHost...)
				}
				if len(notHost) > 0 {
					rest = strings.Join(notHost, ".") + rest
				}
				u.hostname = strings.Join(valid, ".")
				break
			}
		}
		if utf16Len(u.hostname) > 255 {
			u.hostname = ""
		}
		if ipv6 {
			u.hostname = u.hostname[1 : len(u.hostname)-1]
		}
	}
	if i := strings.IndexByte(rest, '#'); i != -1 {
		u.hash = rest[i:]
		rest = rest[:i]
	}
	if i := strings.IndexByte(rest, '?'); i != -1 {
		u.search = rest[i:]
		rest = rest[:i]
	}
	u.pathname = rest
	return u
}

// hostnameXed returns part with each UTF-16 code unit above 127 replaced
// by "x".
func hostnameXed(part string) string {
	var b strings.Builder
	for _, r := range part {
		switch {
		case r < 128:
			b.WriteRune(r)
		case r >= 0x10000:
			b.WriteString("xx")
		default:
			b.WriteByte('x')
		}
	}
	return b.String()
}

// parseHost is mdurl's Url.parseHost.
func (u *mdURL) parseHost(host string) {
	i := len(host)
	for i > 0 && host[i-1] >= '0' && host[i-1] <= '9' {
		i--
	}
	if i > 0 && host[i-1] == ':' {
		if port := host[i:]; port != "" {
			u.port = port
		}
		host = host[:i-1]
	}
	if host != "" {
		u.hostname = host
	}
}

// format is mdurl's format.
func (u *mdURL) format() string {
	var b strings.Builder
	b.WriteString(u.protocol)
	if u.slashes {
		b.WriteString("//")
	}
	if u.auth != "" {
		b.WriteString(u.auth)
		b.WriteByte('@')
	}
	if strings.IndexByte(u.hostname, ':') != -1 {
		b.WriteString("[" + u.hostname + "]")
	} else {
		b.WriteString(u.hostname)
	}
	if u.port != "" {
		b.WriteString(":" + u.port)
	}
	b.WriteString(u.pathname)
	b.WriteString(u.search)
	b.WriteString(u.hash)
	return b.String()
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

const upperHex = "0123456789ABCDEF"

// encodeURL is mdurl's encode with its default characters kept
// (;/?:@&=+$,-_.!~*'()#) and existing percent-escapes kept.
func encodeURL(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			b.WriteString(s[i : i+3])
			i += 2
			continue
		}
		if c < utf8.RuneSelf {
			if c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || strings.IndexByte(";/?:@&=+$,-_.!~*'()#", c) >= 0 {
				b.WriteByte(c)
			} else {
				b.WriteByte('%')
				b.WriteByte(upperHex[c>>4])
				b.WriteByte(upperHex[c&15])
			}
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b.WriteString("%EF%BF%BD")
			continue
		}
		for _, x := range []byte(s[i : i+size]) {
			b.WriteByte('%')
			b.WriteByte(upperHex[x>>4])
			b.WriteByte(upperHex[x&15])
		}
		i += size - 1
	}
	return b.String()
}

// decodeURL is mdurl's decode: runs of percent-escapes decoded as UTF-8,
// except the ASCII characters in exclude (written back in upper case) and
// invalid sequences (each byte a U+FFFD).
func decodeURL(s, exclude string) string {
	if strings.IndexByte(s, '%') < 0 {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		if !(s[i] == '%' && i+2 < len(s)+0 && i+2 <= len(s)-1 && isHex(s[i+1]) && isHex(s[i+2])) {
			b.WriteByte(s[i])
			i++
			continue
		}
		// A run of escapes.
		var seq []int
		for i+2 < len(s) && s[i] == '%' && isHex(s[i+1]) && isHex(s[i+2]) {
			v, _ := strconv.ParseUint(s[i+1:i+3], 16, 8)
			seq = append(seq, int(v))
			i += 3
		}
		decodeRun(&b, seq, exclude)
	}
	return b.String()
}

func decodeRun(b *strings.Builder, seq []int, exclude string) {
	for i := 0; i < len(seq); i++ {
		b1 := seq[i]
		if b1 < 0x80 {
			if strings.IndexByte(exclude, byte(b1)) >= 0 {
				b.WriteByte('%')
				b.WriteByte(upperHex[b1>>4])
				b.WriteByte(upperHex[b1&15])
			} else {
				b.WriteByte(byte(b1))
			}
			continue
		}
		if b1&0xE0 == 0xC0 && i+1 < len(seq) {
			b2 := seq[i+1]
			if b2&0xC0 == 0x80 {
				chr := (b1<<6)&0x7C0 | b2&0x3F
				if chr < 0x80 {
					b.WriteString("\ufffd\ufffd")
				} else {
					b.WriteRune(rune(chr))
				}
				i++
				continue
			}
		}
		if b1&0xF0 == 0xE0 && i+2 < len(seq) {
			b2, b3 := seq[i+1], seq[i+2]
			if b2&0xC0 == 0x80 && b3&0xC0 == 0x80 {
				chr := (b1<<12)&0xF000 | (b2<<6)&0xFC0 | b3&0x3F
				if chr < 0x800 || chr >= 0xD800 && chr <= 0xDFFF {
					b.WriteString("\ufffd\ufffd\ufffd")
				} else {
					b.WriteRune(rune(chr))
				}
				i += 2
				continue
			}
		}
		if b1&0xF8 == 0xF0 && i+3 < len(seq) {
			b2, b3, b4 := seq[i+1], seq[i+2], seq[i+3]
			if b2&0xC0 == 0x80 && b3&0xC0 == 0x80 && b4&0xC0 == 0x80 {
				chr := (b1<<18)&0x1C0000 | (b2<<12)&0x3F000 | (b3<<6)&0xFC0 | b4&0x3F
				if chr < 0x10000 || chr > 0x10FFFF {
					b.WriteString("\ufffd\ufffd\ufffd\ufffd")
				} else {
					b.WriteRune(rune(chr))
				}
				i += 3
				continue
			}
		}
		b.WriteString("\ufffd")
	}
}

// Punycode (RFC 3492) as punycode.js writes it.
const (
	punyBase        = 36
	punyTMin        = 1
	punyTMax        = 26
	punySkew        = 38
	punyDamp        = 700
	punyInitialBias = 72
	punyInitialN    = 128
	punyMaxInt      = 2147483647
)

func punyAdapt(delta, numPoints int, first bool) int {
	if first {
		delta /= punyDamp
	} else {
		delta /= 2
	}
	delta += delta / numPoints
	k := 0
	for delta > ((punyBase-punyTMin)*punyTMax)/2 {
		delta /= punyBase - punyTMin
		k += punyBase
	}
	return k + (punyBase-punyTMin+1)*delta/(delta+punySkew)
}

func punyDigit(d int) byte {
	if d < 26 {
		return byte('a' + d)
	}
	return byte('0' + d - 26)
}

// punyEncode is punycode.js's encode; false on overflow.
func punyEncode(s string) (string, bool) {
	input := []rune(s)
	var out []byte
	for _, r := range input {
		if r < 0x80 {
			out = append(out, byte(r))
		}
	}
	basic := len(out)
	handled := basic
	if basic > 0 {
		out = append(out, '-')
	}
	n, delta, bias := punyInitialN, 0, punyInitialBias
	for handled < len(input) {
		m := punyMaxInt
		for _, r := range input {
			if int(r) >= n && int(r) < m {
				m = int(r)
			}
		}
		if m-n > (punyMaxInt-delta)/(handled+1) {
			return "", false
		}
		delta += (m - n) * (handled + 1)
		n = m
		for _, r := range input {
			if int(r) < n {
				delta++
				if delta > punyMaxInt {
					return "", false
				}
			}
			if int(r) == n {
				q := delta
				for k := punyBase; ; k += punyBase {
					t := k - bias
					if k <= bias {
						t = punyTMin
					} else if k >= bias+punyTMax {
						t = punyTMax
					}
					if q < t {
						break
					}
					out = append(out, punyDigit(t+(q-t)%(punyBase-t)))
					q = (q - t) / (punyBase - t)
				}
				out = append(out, punyDigit(q))
				bias = punyAdapt(delta, handled+1, handled == basic)
				delta = 0
				handled++
			}
		}
		delta++
		n++
	}
	return string(out), true
}

func punyBasicToDigit(c rune) int {
	switch {
	case c >= '0' && c <= '9':
		return 26 + int(c-'0')
	case c >= 'A' && c <= 'Z':
		return int(c - 'A')
	case c >= 'a' && c <= 'z':
		return int(c - 'a')
	}
	return punyBase
}

// punyDecode is punycode.js's decode; false where it throws.
func punyDecode(s string) (string, bool) {
	input := []rune(s)
	var out []rune
	basic := -1
	for i, r := range input {
		if r == '-' {
			basic = i
		}
	}
	if basic < 0 {
		basic = 0
	}
	for j := 0; j < basic; j++ {
		if input[j] >= 0x80 {
			return "", false
		}
		out = append(out, input[j])
	}
	i, n, bias := 0, punyInitialN, punyInitialBias
	index := 0
	if basic > 0 {
		index = basic + 1
	}
	for index < len(input) {
		oldi := i
		w := 1
		for k := punyBase; ; k += punyBase {
			if index >= len(input) {
				return "", false
			}
			digit := punyBasicToDigit(input[index])
			index++
			if digit >= punyBase {
				return "", false
			}
			if digit > (punyMaxInt-i)/w {
				return "", false
			}
			i += digit * w
			t := k - bias
			if k <= bias {
				t = punyTMin
			} else if k >= bias+punyTMax {
				t = punyTMax
			}
			if digit < t {
				break
			}
			if w > punyMaxInt/(punyBase-t) {
				return "", false
			}
			w *= punyBase - t
		}
		outLen := len(out) + 1
		bias = punyAdapt(i-oldi, outLen, oldi == 0)
		if i/outLen > punyMaxInt-n {
			return "", false
		}
		n += i / outLen
		i %= outLen
		out = append(out, 0)
		copy(out[i+1:], out[i:])
		out[i] = rune(n)
		i++
	}
	for _, r := range out {
		// String.fromCodePoint throws beyond U+10FFFF; a lone surrogate
		// has no UTF-8 form here.
		if r > 0x10FFFF || r >= 0xD800 && r <= 0xDFFF {
			return "", false
		}
	}
	return string(out), true
}

// labelSeparators maps punycode.js's other label separators to ".".
var labelSeparators = strings.NewReplacer("\u3002", ".", "\uff0e", ".", "\uff61", ".")

// punyMapDomain is punycode.js's mapDomain: the part after an "@" (if
// any) split into labels at the separators ".", "。", "．" and "｡".
func punyMapDomain(domain string, label func(string) (string, bool)) (string, bool) {
	prefix := ""
	if parts := strings.Split(domain, "@"); len(parts) > 1 {
		prefix = parts[0] + "@"
		domain = parts[1]
	}
	domain = labelSeparators.Replace(domain)
	labels := strings.Split(domain, ".")
	for i, l := range labels {
		m, ok := label(l)
		if !ok {
			return "", false
		}
		labels[i] = m
	}
	return prefix + strings.Join(labels, "."), true
}

func punycodeToASCII(host string) (string, bool) {
	return punyMapDomain(host, func(l string) (string, bool) {
		for i := 0; i < len(l); i++ {
			if l[i] >= 0x80 {
				e, ok := punyEncode(l)
				return "xn--" + e, ok
			}
		}
		return l, true
	})
}

func punycodeToUnicode(host string) (string, bool) {
	return punyMapDomain(host, func(l string) (string, bool) {
		if strings.HasPrefix(l, "xn--") {
			return punyDecode(strings.ToLower(l[4:]))
		}
		return l, true
	})
}
