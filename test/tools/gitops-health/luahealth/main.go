// luahealth runs an Argo CD custom health check (Lua, as resource.customizations.health.<group_kind>
// takes it) in gopher-lua, the interpreter Argo CD embeds: the object read as JSON from stdin is the
// global `obj`, the script's returned table is printed as JSON: {"status","message"}.
// Usage: luahealth SCRIPT.lua < object.json
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	lua "github.com/yuin/gopher-lua"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: luahealth SCRIPT.lua < object.json")
		os.Exit(2)
	}
	script, err := os.ReadFile(os.Args[1])
	if err != nil {
		fail(err)
	}
	raw, err := io.ReadAll(os.Stdin)
	if err != nil {
		fail(err)
	}
	var obj interface{}
	if err := json.Unmarshal(raw, &obj); err != nil {
		fail(err)
	}
	L := lua.NewState(lua.Options{SkipOpenLibs: false})
	defer L.Close()
	L.SetGlobal("obj", toLua(L, obj))
	if err := L.DoString(string(script)); err != nil {
		fail(err)
	}
	ret, ok := L.Get(-1).(*lua.LTable)
	if !ok {
		fail(fmt.Errorf("the script returned %s, not a table", L.Get(-1).Type()))
	}
	out, _ := json.Marshal(map[string]string{
		"status":  lua.LVAsString(ret.RawGetString("status")),
		"message": lua.LVAsString(ret.RawGetString("message")),
	})
	fmt.Println(string(out))
}

// toLua converts decoded JSON the way Argo CD hands objects to its scripts: objects become tables
// keyed by string, arrays 1-based sequences, numbers LNumber, null nil.
func toLua(L *lua.LState, v interface{}) lua.LValue {
	switch t := v.(type) {
	case map[string]interface{}:
		tbl := L.NewTable()
		for k, e := range t {
			tbl.RawSetString(k, toLua(L, e))
		}
		return tbl
	case []interface{}:
		tbl := L.NewTable()
		for _, e := range t {
			tbl.Append(toLua(L, e))
		}
		return tbl
	case string:
		return lua.LString(t)
	case float64:
		return lua.LNumber(t)
	case bool:
		return lua.LBool(t)
	default:
		return lua.LNil
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "luahealth:", err)
	os.Exit(1)
}
