"""Dynamic Resource Allocation as kube-scheduler's DynamicResources plugin sees it, shared by the steps
that a pod's ResourceClaims go through: the `claim` rung's checks (`claims`), which devices each node
offers each request (`devices`), the structured allocator's search (`allocator`), CEL device selectors
(`cel`), and the evidence and changes the steps' answers share (`evidence`, `changes`)."""
