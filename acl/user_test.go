package acl

import "testing"

// Read access to every key (SORT's BY and GET) needs one selector that both allows the
// command and has allkeys or %R~*: a pattern that matches everything but is not "*", write
// access alone, or ~* in a selector that does not allow the command is not enough.
func TestUser_FullKeyAccess_NeedsAllKeysReadInAnAllowingSelector(t *testing.T) {
	var r Registry
	get := Commands().Lookup("get")
	req := &Request{Cmd: get, Args: args("get app:1"), HasKeys: true, Keys: []KeyRef{{Pos: 1, Perm: PermRead}}}
	for _, tc := range []struct {
		ops  []string
		want bool
	}{
		{[]string{"on", "allkeys", "+get"}, true},
		{[]string{"on", "%R~*", "+get"}, true},
		{[]string{"on", "%R~app:*", "%R~*", "+get"}, true},
		{[]string{"on", "~app:*", "+get"}, false},
		{[]string{"on", "~app:*", "~*a*", "+get"}, false},
		{[]string{"on", "%W~*", "~app:*", "+get"}, false},
		{[]string{"on", "~app:*", "+get", "(~* +set)"}, false},
		{[]string{"on", "~app:*", "+get", "(~* +get)"}, true},
	} {
		u := setUser(t, &r, "u", append([]string{"reset"}, tc.ops...)...)
		if got := u.FullKeyAccess(req, PermRead); got != tc.want {
			t.Errorf("%v: FullKeyAccess = %v, want %v", tc.ops, got, tc.want)
		}
	}
}
