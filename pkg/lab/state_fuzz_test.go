package lab

import "testing"

func FuzzParseState(f *testing.F) {
	f.Add([]byte(`{"dir":"/tmp/lab","lbAddress":"127.0.20.1:6443","members":[{"name":"apiserver-1","pid":42}],"etcd":[{"name":"etcd-1","pid":41}]}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseState(data)
		if err != nil {
			return
		}
		_ = s.PIDs()
	})
}
