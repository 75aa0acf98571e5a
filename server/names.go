package server

import "regexp"

// settingRE matches the settings that errors name in parentheses: a
// field of Limits or Config, of this package or another, as in
// "(Limits.MaxConns)" or "(auth.Config.WebhookMaxCalls)".
var settingRE = regexp.MustCompile(`\((?:[a-z]+\.)?(?:Limits|Config)\.[A-Za-z]+\)`)

// nameSettings returns msg with each setting it names followed by what
// name returns for it, as in "(Limits.MaxConns, serve --max-conns)";
// those for which name returns "", and all of them when name is nil,
// stay as they are.
func nameSettings(msg string, name func(setting string) string) string {
	if name == nil {
		return msg
	}
	return settingRE.ReplaceAllStringFunc(msg, func(m string) string {
		setting := m[1 : len(m)-1]
		if n := name(setting); n != "" {
			return "(" + setting + ", " + n + ")"
		}
		return m
	})
}

// settingNames is Config.SettingName (nil: none).
type settingNames func(setting string) string

// named returns msg, an error's text about to go out, with its settings
// named as Config.SettingName names them.
func (n settingNames) named(msg string) string { return nameSettings(msg, n) }
