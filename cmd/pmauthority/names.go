package main

import (
	"flag"
	"reflect"
)

// derivedSettings are the settings that the libraries' errors name and
// that no flag writes to: serve derives them from the flag given here
// (planMemory, authFlags.policy).
var derivedSettings = map[string]string{
	"Limits.MaxMemory":            "max-memory", // the documents' share of it
	"Limits.MaxDocMemory":         "max-memory", // a share of Limits.MaxMemory
	"Limits.MaxBodyMemory":        "max-body-memory",
	"auth.Config.WebhookMaxCalls": "auth-webhook-max-calls",
}

// settingNames returns how serve lets one set the settings that the
// libraries' errors name (server.Config.SettingName): "serve --max-conns"
// for "Limits.MaxConns". The flags of fs that write to a field of f's
// configurations name it, matched by the field's address: those of
// server.Config and collab.Config as "Config.Field", those of their
// Limits as "Limits.Field"; derivedSettings name the others.
func settingNames(fs *flag.FlagSet, f *serveFlags) map[string]string {
	fields := map[uintptr]string{}
	addFields(fields, "Config.", reflect.ValueOf(&f.server).Elem(), false)
	addFields(fields, "Config.", reflect.ValueOf(&f.collab).Elem(), false)
	addFields(fields, "Limits.", reflect.ValueOf(&f.server.Limits).Elem(), true)
	addFields(fields, "Limits.", reflect.ValueOf(&f.collab.Limits).Elem(), true)
	names := map[string]string{}
	fs.VisitAll(func(fl *flag.Flag) {
		// The flag.Value of a field is a pointer to it, converted
		// (flag.IntVar's, or a type of this package as sizeFlag).
		v := reflect.ValueOf(fl.Value)
		if v.Kind() != reflect.Pointer {
			return
		}
		if setting, ok := fields[v.Pointer()]; ok {
			names[setting] = "serve --" + fl.Name
		}
	})
	for setting, name := range derivedSettings {
		names[setting] = "serve --" + name
	}
	return names
}

// addFields adds to fields the address of each field of the struct v,
// named prefix and the field's name. Fields that are structs are left
// out, as their first field has their address; embedded ones, when
// embedded is set, have their fields added instead (collab.Limits'
// apply.Limits).
func addFields(fields map[uintptr]string, prefix string, v reflect.Value, embedded bool) {
	for i := range v.NumField() {
		sf, fv := v.Type().Field(i), v.Field(i)
		switch {
		case sf.Type.Kind() != reflect.Struct:
			fields[fv.Addr().Pointer()] = prefix + sf.Name
		case sf.Anonymous && embedded:
			addFields(fields, prefix, fv, embedded)
		}
	}
}
