"""Read representations of the catalogue: channels, people, topics, organisations and
videos. Every field is listed; nested parts come from prefetched rows only."""

from rest_framework import serializers

from summaries.models import Appearance, Channel, Organisation, Person, Topic, Video
from summaries.text.durations import format_duration

from .fields import ApiUrlField, PageUrlField


class ChannelRefSerializer(serializers.ModelSerializer):
    url = ApiUrlField("api:channel-detail")

    class Meta:
        model = Channel
        fields = ["slug", "name", "url"]


class PersonRefSerializer(serializers.ModelSerializer):
    url = ApiUrlField("api:person-detail")

    class Meta:
        model = Person
        fields = ["slug", "name", "url"]


class TopicRefSerializer(serializers.ModelSerializer):
    url = ApiUrlField("api:topic-detail")

    class Meta:
        model = Topic
        fields = ["slug", "name", "url"]


class OrganisationRefSerializer(serializers.ModelSerializer):
    url = ApiUrlField("api:organisation-detail")

    class Meta:
        model = Organisation
        fields = ["slug", "name", "url"]


class ChannelSerializer(serializers.ModelSerializer):
    url = ApiUrlField("api:channel-detail")
    html_url = PageUrlField()

    class Meta:
        model = Channel
        fields = ["slug", "name", "description", "site_url", "url", "html_url", "updated_at"]


class PersonSerializer(serializers.ModelSerializer):
    url = ApiUrlField("api:person-detail")
    html_url = PageUrlField()

    class Meta:
        model = Person
        fields = ["slug", "name", "url", "html_url", "updated_at"]


class TopicSerializer(serializers.ModelSerializer):
    url = ApiUrlField("api:topic-detail")
    html_url = PageUrlField()

    class Meta:
        model = Topic
        fields = ["slug", "name", "url", "html_url", "updated_at"]


class OrganisationSerializer(serializers.ModelSerializer):
    url = ApiUrlField("api:organisation-detail")
    domains = serializers.ListField(
        child=serializers.CharField(), source="domain_list", read_only=True
    )

    class Meta:
        model = Organisation
        fields = ["slug", "name", "domains", "url", "updated_at"]


class AppearanceSerializer(serializers.ModelSerializer):
    person = PersonRefSerializer(read_only=True)
    organisation = OrganisationRefSerializer(read_only=True, allow_null=True)

    class Meta:
        model = Appearance
        fields = ["person", "organisation"]


class VideoSerializer(serializers.ModelSerializer):
    url = ApiUrlField("api:video-detail")
    html_url = PageUrlField()
    summary_url = ApiUrlField("api:summary-detail")
    channel = ChannelRefSerializer(read_only=True)
    duration = serializers.SerializerMethodField(help_text="The length as m:ss or h:mm:ss.")
    people = AppearanceSerializer(source="appearances", many=True, read_only=True)
    topics = TopicRefSerializer(many=True, read_only=True)

    class Meta:
        model = Video
        fields = [
            "slug",
            "title",
            "url",
            "html_url",
            "summary_url",
            "channel",
            "source_url",
            "platform",
            "platform_video_id",
            "duration_seconds",
            "duration",
            "language",
            "published_on",
            "thumbnail_url",
            "blurb",
            "people",
            "topics",
            "created_at",
            "updated_at",
        ]

    def get_duration(self, video) -> str:
        return format_duration(video.duration_seconds)


class RelatedVideoSerializer(serializers.Serializer):
    video = VideoSerializer(read_only=True)
    score = serializers.FloatField(read_only=True)
    reasons = serializers.ListField(child=serializers.CharField(), read_only=True)


class VideoCardSerializer(VideoSerializer):
    """A video as a list item shows it: what a card needs (the detail has the rest)."""

    class Meta(VideoSerializer.Meta):
        fields = [
            "slug",
            "title",
            "url",
            "html_url",
            "channel",
            "duration_seconds",
            "duration",
            "language",
            "published_on",
            "thumbnail_url",
            "people",
            "topics",
        ]
