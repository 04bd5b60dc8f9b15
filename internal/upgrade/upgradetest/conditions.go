package upgradetest

// The status conditions the simulated operators write, in the shape of metav1.Condition and
// ClusterOperatorStatusCondition (type, status, reason, message, lastTransitionTime).

// condition is one condition, its transition time at.
func condition(typ, status, reason, msg, at string) map[string]any {
	return map[string]any{"type": typ, "status": status, "reason": reason, "message": msg, "lastTransitionTime": at}
}

// setCond sets a condition in a conditions slice, keeping lastTransitionTime when the status
// did not change.
func setCond(conds []any, c map[string]any) []any {
	for i, x := range conds {
		m, _ := x.(map[string]any)
		if m["type"] == c["type"] {
			if m["status"] == c["status"] {
				c["lastTransitionTime"] = m["lastTransitionTime"]
			}
			conds[i] = c
			return conds
		}
	}
	return append(conds, c)
}

func getCond(conds []any, typ string) map[string]any {
	for _, x := range conds {
		if m, _ := x.(map[string]any); m["type"] == typ {
			return m
		}
	}
	return nil
}
