// plan
// ```json
// {"launches": [
// ```
// ```json
