package reliability_test

const lastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"
