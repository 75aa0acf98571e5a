package export

import (
	"fmt"

	"github.com/pmauthority/pmauthority/model"
)

// Format is an export format.
type Format string

// The export formats.
const (
	FormatText     Format = "text"
	FormatMarkdown Format = "markdown"
	FormatHTML     Format = "html"
)

// Formats lists the export formats.
var Formats = []Format{FormatText, FormatMarkdown, FormatHTML}

// ParseFormat returns the format called name, or an error naming it.
func ParseFormat(name string) (Format, error) {
	for _, f := range Formats {
		if string(f) == name {
			return f, nil
		}
	}
	return "", fmt.Errorf("unknown export format %q (want text, markdown or html)", name)
}

// ContentType is the HTTP media type of the format, with its charset.
func (f Format) ContentType() string {
	switch f {
	case FormatMarkdown:
		return "text/markdown; charset=utf-8"
	case FormatHTML:
		return "text/html; charset=utf-8"
	}
	return "text/plain; charset=utf-8"
}

// Export renders doc in format f.
func Export(doc *model.Node, f Format) (string, error) {
	switch f {
	case FormatText:
		return Text(doc), nil
	case FormatMarkdown:
		return Markdown(doc)
	case FormatHTML:
		return HTML(doc)
	}
	return "", fmt.Errorf("unknown export format %q (want text, markdown or html)", string(f))
}
