package main

import "strings"

// deployment is a typical Deployment (three containers, env, probes,
// volumes); image is the first container's.
func deployment(image string) string {
	return strings.ReplaceAll(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels:
    app: web
spec:
  replicas: 3
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: nginx
        image: IMAGE
        ports:
        - containerPort: 80
          name: http
        env:
        - name: LOG_LEVEL
          value: info
        - name: FEATURE_FLAGS
          value: a,b,c
        readinessProbe:
          httpGet:
            path: /healthz
            port: http
          periodSeconds: 5
        livenessProbe:
          httpGet:
            path: /healthz
            port: http
          initialDelaySeconds: 10
        resources:
          requests:
            cpu: 100m
            memory: 128Mi
          limits:
            memory: 256Mi
        volumeMounts:
        - name: config
          mountPath: /etc/nginx/conf.d
        - name: cache
          mountPath: /var/cache/nginx
      - name: sidecar
        image: busybox:1.36
        args: ["sh", "-c", "tail -f /dev/null"]
        env:
        - name: MODE
          value: sidecar
      - name: metrics
        image: prom/nginx-exporter:1.1
        ports:
        - containerPort: 9113
          name: metrics
      volumes:
      - name: config
        configMap:
          name: web-config
      - name: cache
        emptyDir: {}
`, "IMAGE", image)
}

// statefulSet is seed 004's StatefulSet; withEnv keeps TO_BE_DELETED.
func statefulSet(image string, withEnv bool) string {
	env := ""
	if withEnv {
		env = "        - name: TO_BE_DELETED\n          value: needs to be deleted!\n"
	}
	return `apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: my-wonderhoy-app
  labels:
    app: my-wonderhoy-app
spec:
  serviceName: my-wonderhoy-app
  replicas: 3
  selector:
    matchLabels:
      app: my-wonderhoy-app
  template:
    metadata:
      labels:
        app: my-wonderhoy-app
    spec:
      containers:
      - name: nginx
        image: ` + image + `
        env:
` + env + `        - name: ANOTHER_ENV
          value: who cares?
`
}

// daemonSet is a small DaemonSet; withEnv adds an env var that v2 drops.
func daemonSet(image string, withEnv bool) string {
	env := ""
	if withEnv {
		env = "        env:\n        - name: TO_BE_DELETED\n          value: needs to be deleted!\n"
	}
	return `apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: agent
spec:
  selector:
    matchLabels:
      app: agent
  template:
    metadata:
      labels:
        app: agent
    spec:
      containers:
      - name: agent
        image: ` + image + `
` + env
}
